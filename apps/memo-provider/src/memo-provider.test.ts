import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeCheckpointProvider } from '@crewline/provider-testkit';
import { afterAll } from 'vitest';
import { MemoProvider } from './memo-provider.js';

const root = mkdtempSync(join(tmpdir(), 'memo-provider-'));
let locations = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeCheckpointProvider({
  name: 'MemoProvider',
  createProvider: () => new MemoProvider({ root }),
  createLocation: () => {
    locations += 1;
    return `memo://test-${process.pid}-${locations}`;
  },
  removeLocation: (location) =>
    rmSync(join(root, location.slice('memo://'.length)), { recursive: true, force: true }),
});
