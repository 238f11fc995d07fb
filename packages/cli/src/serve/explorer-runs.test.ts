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
