// The Postgres test server of provider-postgres's own tests (one copy of the cluster handling), through
// its workspace-only "./test-support" entry: a suite's vitest.config.ts names provider-postgres's
// global-setup.ts, and its tests use these.
export {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  testServerUrl,
  withServer,
} from '@crewline/provider-postgres/test-support';

/** The password of the test server's URL: child processes get it through PGPASSWORD, as workers would. */
export function serverPassword(url: string): string {
  return decodeURIComponent(new URL(url).password);
}
