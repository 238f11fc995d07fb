import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { peerRangeDisagreements, workspacePeerRangeDisagreements } from './peer-ranges.js';

// Reads the package.json files of the workspace, no packing: this check runs in a second, apart from
// the tarball scenarios of packaging.test.ts.
const workspaceRoot = fileURLToPath(new URL('../../../', import.meta.url));

describe('peer dependency ranges', () => {
  it('every public package declares the same range for each peer it shares with another', async () => {
    expect(await workspacePeerRangeDisagreements(workspaceRoot)).toEqual([]);
  });

  it('names the peer, each range and the packages that declare it', () => {
    expect(
      peerRangeDisagreements([
        { name: '@crewline/runtime', peerDependencies: { zod: '^4.2.0', '@crewline/events': '>=0.1.0 <1' } },
        {
          name: '@crewline/provider-json',
          peerDependencies: { zod: '^4.6.7', '@crewline/events': '>=0.1.0 <1' },
        },
        { name: '@crewline/worker', peerDependencies: { zod: '^4.6.7' } },
      ]),
    ).toEqual([
      'peer zod is declared with 2 ranges: ^4.2.0 (@crewline/runtime), ^4.6.7 (@crewline/provider-json, @crewline/worker); declare one range in every public package (the lowest version that every package works with)',
    ]);
  });

  it('leaves alone a peer only one package declares', () => {
    expect(
      peerRangeDisagreements([
        { name: '@crewline/provider-testkit', peerDependencies: { vitest: '>=3' } },
        { name: '@crewline/runtime', peerDependencies: { zod: '^4.2.0' } },
      ]),
    ).toEqual([]);
  });
});
