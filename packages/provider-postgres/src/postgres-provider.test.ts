import { describeCheckpointProvider } from '@crewline/provider-testkit';
import { PostgresProvider } from './postgres-provider.js';
import { spawnWriters } from './test-support/child-processes.js';
import {
  corruptCheckpoint,
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  testServerUrl,
} from './test-support/test-server.js';

/** The password of the test server's URL, handed to writer processes the way a worker gets it. */
function serverPassword(): string | undefined {
  const url = testServerUrl();
  if (url === undefined) return undefined;
  const password = new URL(url).password;
  return password === '' ? undefined : decodeURIComponent(password);
}

describeWithPostgres('PostgresProvider on a real server', () => {
  describeCheckpointProvider({
    name: 'PostgresProvider',
    createProvider: () => new PostgresProvider({ poolSize: 4 }),
    createLimitedProvider: (maxCheckpointBytes) => new PostgresProvider({ maxCheckpointBytes, poolSize: 4 }),
    createLocation: () => temporaryLocation(),
    removeLocation: (location) => dropLocation(location),
    corrupt: (location, id, mode) => corruptCheckpoint(location, id, mode),
    concurrentWriters: {
      spawn: async (location, count, perWriter) => {
        await spawnWriters(location, count, perWriter, serverPassword());
      },
    },
    processWriters: { writers: 4, perWriter: 25 },
  });
});
