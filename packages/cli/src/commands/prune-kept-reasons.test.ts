import { readdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import {
  createProviderRegistry,
  type ListingWithUnreadable,
  type ListQuery,
  type PruneOptions,
  type PruneResult,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFakeFork } from '../test-support/fake-crew.js';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// Prune lists what it keeps because a fork starts from it, each with the branches forked from it.
// A checkpoint kept for a fork the command's listing does not show — a fork file that cannot be read
// (it still names its parent), or a fork written while the prune ran (the JSON provider looks at
// the directories again before it removes anything) — was printed as "forked to" with nothing after it.
describe('prune says why it keeps a checkpoint whose fork it cannot list', () => {
  let project: { path: string; remove: () => Promise<void> };
  let fixture: Fixture;

  beforeEach(async () => {
    project = await temporaryDirectory('crewline-prune-kept-');
    fixture = await writeFixture('json', project.path);
  });
  afterEach(async () => {
    await fixture?.provider.close?.();
    await project.remove();
  });

  /** The row of the kept checkpoint `id` (under "Kept"), or undefined. */
  const keptRow = (stdout: string, id: string) =>
    stdout
      .split('Kept')[1]
      ?.split('\n')
      .find((line) => line.startsWith(`  ${id}`));

  /**
   * A file in main's directory named as a fork of `parent` would be (a new id, `_p-<parent>`) whose
   * contents are not a checkpoint.
   */
  async function writeUnreadableFork(parent: StoredCheckpoint): Promise<string> {
    const directory = dirname(parent.reference);
    const newest = (await readdir(directory)).sort().at(-1)!;
    // An id of the same shape as the newest file's, a little later.
    const newestId = newest.slice(0, newest.indexOf('_p-'));
    const id = `${newestId.slice(0, -4)}ffff`;
    const path = join(directory, `${id}_p-${parent.id}.json`);
    await writeFile(path, '{"not a checkpoint');
    return path;
  }

  for (const dryRun of [false, true]) {
    it(`an unreadable fork file names it as parent${dryRun ? ' (--dry-run)' : ''}`, async () => {
      const parent = fixture.main[1]!;
      const unreadable = await writeUnreadableFork(parent);
      const result = await runCommand(
        ['checkpoint', 'prune', '--keep', '2', ...(dryRun ? ['--dry-run'] : [])],
        { cwd: project.path },
      );
      expect(result.code).toBe(0);
      // main[0] is removed; main[2] is the readable fork's point; main[1] the unreadable one's.
      expect(result.stdout).toContain('Kept 2 checkpoints that forks start from (prune never removes one):');
      expect(keptRow(result.stdout, fixture.main[2]!.id)).toMatch(/ {2}forked to experiment$/);
      const row = keptRow(result.stdout, parent.id);
      expect(row).toBeDefined();
      expect(row).not.toMatch(/forked to\s*$/);
      expect(row).toContain(
        `kept: a fork file that cannot be read names it as parent (./.checkpoints/main/${basename(unreadable)})`,
      );
    });
  }

  it('a fork written while the prune ran, found by its second look', async () => {
    const other = new JsonProvider();
    const forkPoint = fixture.main[1]!;
    // The prune plans from a listing, then looks at the directories again right before it removes:
    // another process forks from main[1] in between.
    const forking = new (class extends JsonProvider {
      #pruning = false;
      override async prune(location: string, options: PruneOptions): Promise<PruneResult> {
        this.#pruning = true;
        return super.prune(location, options);
      }
      override async listWithUnreadable(location: string, query?: ListQuery): Promise<ListingWithUnreadable> {
        const listing = await super.listWithUnreadable(location, query);
        if (this.#pruning) {
          this.#pruning = false;
          await writeFakeFork(other, fixture.location, forkPoint, 'late');
        }
        return listing;
      }
    })();
    const result = await runCommand(['checkpoint', 'prune', '--keep', '2'], {
      cwd: project.path,
      providers: createProviderRegistry([{ name: 'json', claims: () => true, create: () => forking }]),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Kept 2 checkpoints that forks start from (prune never removes one):');
    expect(keptRow(result.stdout, forkPoint.id)).toMatch(/ {2}forked to late$/);
  });
});
