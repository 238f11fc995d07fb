// The Postgres test server of crewline's own suites (the worker's, the CLI's, the fencing trials),
// one copy of the cluster handling. The "./test-support" entry exists in the workspace only, under
// the @crewline/source condition: publishConfig.exports leaves it out of the published package, as
// `files` leaves out this folder. A suite's vitest.config.ts names global-setup.ts beside this file.
import type {} from './global-setup.js';

export {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  testServerUrl,
  withServer,
} from './test-server.js';
