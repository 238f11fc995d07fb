// The Postgres test server of provider-postgres's own tests, through the workspace devDependency.
import type {} from '../../node_modules/@crewline/provider-postgres/src/test-support/global-setup.js';

export {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  testServerUrl,
  withServer,
} from '../../node_modules/@crewline/provider-postgres/src/test-support/test-server.js';

/** The password of the test server's URL: child workers get it through PGPASSWORD, as real ones would. */
export function serverPassword(url: string): string {
  return decodeURIComponent(new URL(url).password);
}
