import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeCheckpointProvider } from '@crewline/provider-testkit';
import { JsonProvider } from './json-provider.js';
import { corruptCheckpointFile } from './test-support/corrupt.js';
import { spawnScript, waitForSuccess } from './test-support/spawn.js';

describeCheckpointProvider({
  name: 'JsonProvider',
  createProvider: () => new JsonProvider(),
  createLocation: () => mkdtempSync(join(tmpdir(), 'crewline-json-')),
  removeLocation: (location) => rmSync(location, { recursive: true, force: true }),
  corrupt: corruptCheckpointFile,
  createLimitedProvider: (maxCheckpointBytes) => new JsonProvider({ maxCheckpointBytes }),
  concurrentWriters: {
    async spawn(location, count, perWriter) {
      await Promise.all(
        Array.from({ length: count }, (_, index) =>
          waitForSuccess(
            spawnScript('./writer-process.ts', [location, String(perWriter), String(index)]),
            `writer process ${index}`,
          ),
        ),
      );
    },
  },
});
