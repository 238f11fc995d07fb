// A dry run (which does not look at the directories again before removing) must not list the fork
// point of a fork whose file cannot be read: the file name says which checkpoint it forks from.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { afterEach, expect, it } from 'vitest';
import { JsonProvider } from '../json-provider.js';

let location = '';
afterEach(() => rmSync(location, { recursive: true, force: true }));
const checkpoint = (lineageId: string, branch: string, parentId: string | null) =>
  buildCheckpointWrite({ metadata: { lineageId, branch, parentId } });

for (const scope of ['run', 'every run'] as const)
  it(`a dry run does not list the fork point of an unreadable fork (${scope})`, async () => {
    location = mkdtempSync(join(tmpdir(), 'review-dry-'));
    const provider = new JsonProvider({ fsync: false });
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1)
      ids.push(provider.writeSync(location, checkpoint('run', 'main', ids.at(-1) ?? null)).id);
    const fork = provider.writeSync(location, checkpoint('fork', 'fork/a', ids[1]!));
    writeFileSync(fork.reference, '{"not a checkpoint');
    const options = scope === 'run' ? { keep: 1, lineageId: 'run' } : { keep: 1 };
    const removed = (await provider.prune(location, { ...options, dryRun: true })).removed.map(
      (entry) => entry.id,
    );
    expect(removed).toEqual([ids[0]]);
  });
