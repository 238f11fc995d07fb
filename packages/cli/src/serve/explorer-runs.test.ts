import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { writeCrewRun } from '../test-support/real-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { ExplorerRuns, parseRunRequest, type RunRequest } from './explorer-runs.js';

describe('parseRunRequest', () => {
  it('takes a fork with a branch, inputs and outputs', () => {
    expect(
      parseRunRequest({
        checkpoint: 'c1',
        mode: 'fork',
        branch: 'what-if/b',
        inputs: ['a=1'],
        outputs: ['1=x'],
      }),
    ).toEqual({ checkpoint: 'c1', mode: 'fork', branch: 'what-if/b', inputs: ['a=1'], outputs: ['1=x'] });
  });

  it('refuses a branch name a fork could not write, before any run starts', () => {
    for (const branch of ['bad name', 'a/../b', '/x', 'x/'])
      expect(() => parseRunRequest({ checkpoint: 'c1', mode: 'fork', branch }), branch).toThrow(
        /branch name .* is not allowed; use segments of letters, digits/,
      );
  });
});

describe('ExplorerRuns.start', () => {
  it('refuses at once, starting no run, an input the run does not know and a fork that would run nothing', async () => {
    const project = await temporaryDirectory();
    const run = await writeCrewRun('json', project.path);
    try {
      const provider = await providerOf('json');
      const location = provider.resolveLocation(run.location);
      const updates: unknown[] = [];
      const runs = new ExplorerRuns({
        cwd: project.path,
        providers: cliProviderRegistry(),
        provider,
        location,
        reference: async (id) => `${location}#${id}`,
        onUpdate: (_event, data) => updates.push(data),
      });
      const refusals: [RunRequest, RegExp][] = [
        [
          { checkpoint: run.checkpoints[0]!.id, mode: 'fork', inputs: ['topc=x'] },
          /input "topc" is not one the run knows \(known: topic\)/,
        ],
        // The trial: a branch that already has checkpoints was answered 202, then the run failed.
        [
          { checkpoint: run.checkpoints[0]!.id, mode: 'fork', branch: 'main' },
          /branch "main" already exists in \S+; choose another branch name in the form or leave it empty/,
        ],
        [
          {
            checkpoint: run.checkpoints.at(-1)!.id,
            mode: 'fork',
            branch: 'done-fork',
            inputs: ['topic=reefs'],
          },
          /nothing to run: every task of crew "Research crew" is completed/,
        ],
      ];
      for (const [request, message] of refusals) {
        await expect(runs.start(request)).rejects.toSatisfy(
          (error) => CrewlineError.hasCode(error, 'invalid_argument') && message.test(error.message),
        );
      }
      expect(runs.list()).toEqual([]);
      expect(updates).toEqual([]);
    } finally {
      await run.close();
      await project.remove();
    }
  });
});

describe('ExplorerRuns limits', () => {
  it('refuses a run identical to one starting or running, and past maxConcurrentRuns; keeps maxFinishedRuns ended records', async () => {
    // Found by a review: five identical fork requests all ran, and every record was kept.
    const project = await temporaryDirectory();
    const run = await writeCrewRun('json', project.path);
    try {
      const provider = await providerOf('json');
      const location = provider.resolveLocation(run.location);
      const runs = new ExplorerRuns({
        cwd: project.path,
        providers: cliProviderRegistry(),
        provider,
        location,
        reference: async (id) => `${location}#${id}`,
        onUpdate: () => undefined,
        maxConcurrentRuns: 2,
        maxFinishedRuns: 2,
      });
      const untilEnded = async () => {
        for (let waited = 0; runs.running > 0; waited += 20) {
          if (waited > 60_000) throw new Error('the runs did not end within 60 s');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const fork: RunRequest = { checkpoint: run.checkpoints[0]!.id, mode: 'fork' };
      // Sent together, as a double submit or a script would: each is judged as it arrives.
      const answers = await Promise.allSettled([
        ...Array.from({ length: 5 }, () => runs.start(fork)),
        runs.start({ ...fork, branch: 'second' }),
        runs.start({ ...fork, branch: 'third' }),
      ]);
      const refusals = answers.flatMap((answer) => (answer.status === 'rejected' ? [answer.reason] : []));
      expect(answers.map((answer) => answer.status)).toEqual([
        'fulfilled',
        ...Array<string>(4).fill('rejected'),
        'fulfilled',
        'rejected',
      ]);
      expect(refusals.every((error) => CrewlineError.hasCode(error, 'conflict'))).toBe(true);
      expect((refusals[0] as Error).message).toMatch(
        /an identical fork of \S+ is already starting; wait for it to end, or change the branch, inputs or outputs/,
      );
      expect((refusals[4] as Error).message).toContain(
        '2 runs started from this page are running, the most it runs at once (maxConcurrentRuns 2); wait for one to end',
      );
      expect(runs.list()).toHaveLength(2);
      await untilEnded();
      expect(runs.list().map((record) => record.status)).toEqual(['finished', 'finished']);

      // Ended, the same request is taken again; past maxFinishedRuns the oldest record is forgotten.
      const again = await runs.start(fork);
      await untilEnded();
      const kept = runs.list();
      expect(kept).toHaveLength(2);
      expect(kept.map((record) => record.branch)).toEqual(['second', again.branch]);
      expect(kept[1]!.status).toBe('finished');

      // A request refused by its checks frees its place: sent again, it gets the same answer.
      const misspelt: RunRequest = { ...fork, inputs: ['topc=x'] };
      for (let attempt = 0; attempt < 2; attempt += 1)
        await expect(runs.start(misspelt)).rejects.toSatisfy((error) =>
          CrewlineError.hasCode(error, 'invalid_argument'),
        );
    } finally {
      await run.close();
      await project.remove();
    }
  }, 120_000);
});
