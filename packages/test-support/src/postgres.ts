// The Postgres test server of provider-postgres's own tests (one copy of the cluster handling): a
// suite's vitest.config.ts names provider-postgres's global-setup.ts, and its tests use these.
import type {} from '../node_modules/@crewline/provider-postgres/src/test-support/global-setup.js';

export {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  testServerUrl,
  withServer,
} from '../node_modules/@crewline/provider-postgres/src/test-support/test-server.js';

/** The password of the test server's URL: child processes get it through PGPASSWORD, as workers would. */
export function serverPassword(url: string): string {
  return decodeURIComponent(new URL(url).password);
}
