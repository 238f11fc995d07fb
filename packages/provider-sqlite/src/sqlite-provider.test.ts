import { describeCheckpointProvider } from '@crewline/provider-testkit';
import { SqliteProvider } from './sqlite-provider.js';
import { spawnWriters } from './test-support/child-processes.js';
import { corruptCheckpoint } from './test-support/corrupt-database.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

describeCheckpointProvider({
  name: 'SqliteProvider',
  createProvider: () => new SqliteProvider(),
  createLimitedProvider: (maxCheckpointBytes) => new SqliteProvider({ maxCheckpointBytes }),
  createLocation: () => temporaryDatabase(),
  removeLocation: (location) => removeTemporaryDatabase(location),
  corrupt: (location, id, mode) => corruptCheckpoint(location, id, mode),
  concurrentWriters: { spawn: spawnWriters },
  processWriters: { writers: 4, perWriter: 25 },
});
