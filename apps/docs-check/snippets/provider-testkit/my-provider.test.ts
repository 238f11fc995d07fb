// my-provider.test.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeCheckpointProvider } from '@crewline/provider-testkit';
import { MyProvider } from './my-provider.js';

describeCheckpointProvider({
  name: 'MyProvider',
  createProvider: () => new MyProvider(),
  createLocation: () => mkdtempSync(join(tmpdir(), 'my-provider-')),
  removeLocation: (location) => rmSync(location, { recursive: true, force: true }),
});
