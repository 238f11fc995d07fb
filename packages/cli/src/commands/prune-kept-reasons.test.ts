import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import {
  type CheckpointProvider,
  createProviderRegistry,
  type ListingWithUnreadable,
  type ListQuery,
  type PruneOptions,
  type PruneResult,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFakeFork } from '../test-support/fake-crew.js';
import { type Fixture, type FixtureKind, providerOf, writeFixture } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// Prune lists what it keeps because a fork starts from it, each with the branches forked from it.
// A checkpoint kept for a fork the command's listing does not show — a fork file that cannot be read
// (it still names its parent), or a fork written while the prune ran (the JSON provider looks at
// the directories again before it removes anything) — was printed as "forked to" with nothing after it.
// Finding those forks must not cost the report what the prune removed, nor a second listing of the
// location on every prune while a damaged fork file stays.
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

  it('lists the location once while an unreadable fork file stays', async () => {
    await writeUnreadableFork(fixture.main[1]!);
    // The command's own listings, not the prune's (the JSON provider's list goes through
    // listWithUnreadable). The first one already names the damaged file: listing the whole location
    // again after every prune cost a 10,000-file location a third more time.
    const provider = new JsonProvider();
    let pruning = false;
    let listings = 0;
    const prune = provider.prune.bind(provider);
    provider.prune = async (location, options) => {
      pruning = true;
      try {
        return await prune(location, options);
      } finally {
        pruning = false;
      }
    };
    const listWithUnreadable = provider.listWithUnreadable.bind(provider);
    provider.listWithUnreadable = async (location, query) => {
      if (!pruning) listings += 1;
      return listWithUnreadable(location, query);
    };
    const result = await runCommand(['checkpoint', 'prune', '--keep', '2'], {
      cwd: project.path,
      providers: createProviderRegistry([{ name: 'json', claims: () => true, create: () => provider }]),
    });
    expect(result.code).toBe(0);
    expect(keptRow(result.stdout, fixture.main[1]!.id)).toContain('kept: a fork file that cannot be read');
    expect(listings).toBe(1);
  });

  it('still reports what it removed when the location cannot be listed again after the prune', async () => {
    // The prune has committed; the listing that would name the fork written meanwhile fails (a
    // dropped connection, a query timeout): the report of what is gone must not be lost with it.
    const other = new JsonProvider();
    const forkPoint = fixture.main[1]!;
    const failing = new (class extends JsonProvider {
      #pruning = false;
      #pruned = false;
      override async prune(location: string, options: PruneOptions): Promise<PruneResult> {
        this.#pruning = true;
        const result = await super.prune(location, options);
        this.#pruned = true;
        return result;
      }
      override async listWithUnreadable(location: string, query?: ListQuery): Promise<ListingWithUnreadable> {
        if (this.#pruned) throw new CrewlineError('provider-json', 'read_failed', 'the disk went away');
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
      providers: createProviderRegistry([{ name: 'json', claims: () => true, create: () => failing }]),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Removed 2 checkpoints from ./.checkpoints:\n  ${fixture.main[0]!.id}`);
    expect(keptRow(result.stdout, forkPoint.id)).toMatch(
      / {2}kept: the prune found a fork of it \(the location could not be listed again to name it\)$/,
    );
    expect(result.stderr).toBe(
      'crewline: could not list ./.checkpoints again to name the forks the prune found: the disk went away\n',
    );
  });

  it('does not take a damaged checkpoint of the run itself for a fork file', async () => {
    // main[1] is the run's own second checkpoint, cut short: its parent is no longer continued by a
    // readable checkpoint of the run, so no plan selects it and nothing is said about it.
    const damaged = fixture.main[1]!;
    await writeFile(damaged.reference, (await readFile(damaged.reference, 'utf8')).slice(0, 40));
    const result = await runCommand(['checkpoint', 'prune', '--keep', '2', '--dry-run'], {
      cwd: project.path,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('fork file');
  });
});

// Another process may remove checkpoints between the command's listing and its prune: the run's own
// `maxCheckpoints` prune, or a second `checkpoint prune`. One it had planned to remove was then
// listed as "kept" because "the prune found a fork of it that is not listed now": it has no fork, and
// it is not stored any more.
for (const kind of ['json', 'sqlite'] satisfies FixtureKind[]) {
  describe(`prune while another process removes checkpoints (${kind})`, () => {
    let project: { path: string; remove: () => Promise<void> };
    let fixture: Fixture;
    let racing: CheckpointProvider;

    beforeEach(async () => {
      project = await temporaryDirectory('crewline-prune-race-');
      fixture = await writeFixture(kind, project.path);
      // A provider of this command's own whose prune starts once the other process removed main[0].
      racing = await providerOf(kind);
      const prune = racing.prune.bind(racing);
      racing.prune = async (location, options) => {
        await fixture.provider.delete(location, fixture.main[0]!.id);
        return prune(location, options);
      };
    });
    afterEach(async () => {
      await racing?.close?.();
      await fixture?.provider.close?.();
      await project.remove();
    });

    const prune = (...extra: string[]) =>
      runCommand(['checkpoint', 'prune', fixture.relative, '--keep', '2', ...extra], {
        cwd: project.path,
        providers: createProviderRegistry([{ name: kind, claims: () => true, create: () => racing }]),
      });

    it('does not call a checkpoint that is gone "kept" for a fork', async () => {
      const result = await prune();
      expect(result.code).toBe(0);
      expect(result.stdout).not.toContain(fixture.main[0]!.id);
      expect(result.stdout).toContain('Kept 1 checkpoint that a fork starts from (prune never removes one):');
      expect(result.stdout).toMatch(
        new RegExp(`\\n {2}${fixture.main[2]!.id} .* {2}forked to experiment\\n`),
      );
    });

    it('leaves it out of --json keptForkPoints', async () => {
      const result = await prune('--json');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).keptForkPoints).toEqual([fixture.main[2]!.id]);
    });
  });
}
