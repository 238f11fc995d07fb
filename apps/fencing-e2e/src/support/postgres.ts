// The Postgres test server of provider-postgres's own tests, through the workspace dependency (one
// copy of the cluster handling: see vitest.config.ts).
import type {} from '../../node_modules/@crewline/provider-postgres/src/test-support/global-setup.js';

export {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  testServerUrl,
} from '../../node_modules/@crewline/provider-postgres/src/test-support/test-server.js';

/** The password of the test server's URL: children get it through PGPASSWORD, as workers would. */
export function serverPassword(url: string): string {
  return decodeURIComponent(new URL(url).password);
}
