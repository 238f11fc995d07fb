import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  branchContents,
  copyLocation,
  inspect,
  listCheckpoints,
  modelCallsByTask,
  readCheckpoint,
  type StorageKind,
  tasksOf,
} from './checkpoints.js';
import { appDirectory, readCalls, repositoryRoot, runCrewline, startDemo, waitFor } from './processes.js';

/** Long enough per model call that the SIGINT lands while the Writer waits for its answer. */
const INTERRUPTED_RUN_LATENCY_MS = 2500;

/**
 * The tutorial end to end for one storage: run the demo in a child process, interrupt it with a
 * real SIGINT right after the first checkpoint appears on disk, then resume and fork it through the
 * app and through `pnpm crewline`, proving with the offline model's call report that the research
 * task is never run again.
 */
export function tutorialScenario(kind: StorageKind): void {
  describe(`the tutorial with ${kind === 'json' ? 'JSON files' : 'SQLite'}`, () => {
    let base: string;
    let location: string;
    const storageArgs = kind === 'sqlite' ? ['--sqlite'] : [];
    const callsFile = (name: string) => join(base, `calls-${name}.json`);
    const copyFor = (name: string) => join(base, `copy-${name}${kind === 'json' ? '' : '.db'}`);
    const firstIn = (copy: string) =>
      kind === 'json' ? join(copy, 'main', first.reference.split('/').at(-1)!) : `${copy}#${first.id}`;
    let first: StoredCheckpoint;
    let printedReference: string;
    let researchOutput: string;
    let mainWriterOutput: string;

    beforeAll(() => {
      base = mkdtempSync(join(tmpdir(), `crewline-tutorial-${kind}-`));
      location = join(base, kind === 'json' ? '.checkpoints' : '.checkpoints.db');
    });

    // Inspections of storage, each with its own provider (see `inspect`).
    const list = (at: string, branch?: string) =>
      inspect(kind, (provider) => listCheckpoints(provider, at, branch));
    const read = (at: string, id: string) => inspect(kind, (provider) => readCheckpoint(provider, at, id));
    const contents = (at: string, branch: string) =>
      inspect(kind, (provider) => branchContents(provider, at, branch));

    afterAll(() => {
      rmSync(base, { recursive: true, force: true });
    });

    it('leaves a checkpoint with the research done and the writer pending when interrupted with SIGINT', async () => {
      const demo = startDemo(storageArgs, {
        base,
        latencyMs: INTERRUPTED_RUN_LATENCY_MS,
        callsFile: callsFile('interrupted'),
      });
      first = await waitFor('the first checkpoint on disk', async () => (await list(location))[0], 60_000);
      demo.child.kill('SIGINT');
      const result = await demo.finished;
      if (kind === 'sqlite') {
        // The database file alone holds the checkpoint (a backup or scp of it copies no -wal file):
        // the interrupted process closed its database before the signal ended it.
        const databaseAlone = join(base, 'database-alone.db');
        copyFileSync(location, databaseAlone);
        expect((await list(databaseAlone)).map((entry) => entry.id)).toEqual([first.id]);
      }

      // The runtime let the process end the way SIGINT ends it, after saying how to continue.
      expect(result.signal ?? result.code).toBe(result.signal === null ? 130 : 'SIGINT');
      expect(result.stdout).toContain('Interrupted (Ctrl+C).');
      const resumeLine = /^ {2}pnpm demo --resume (\S+)$/m.exec(result.stdout);
      expect(resumeLine, result.stdout).not.toBeNull();
      printedReference = resumeLine![1]!;
      expect(result.stdout).toContain(`  pnpm crewline checkpoint resume ${printedReference}`);
      expect(printedReference).toMatch(
        kind === 'json' ? /^\.\/\.checkpoints\/main\/.+_p-none\.json$/ : /^\.\/\.checkpoints\.db#\d{8}T/,
      );
      expect(printedReference).toContain(first.id);

      // Exactly one checkpoint: written when the research task completed.
      const all = await list(location);
      expect(all.map((entry) => entry.id)).toEqual([first.id]);
      expect(first.trigger).toBe('task_completed');
      expect(first.branch).toBe('main');
      const document = await read(location, first.id);
      const tasks = tasksOf(document);
      expect(tasks.map((task) => [task.name, task.status])).toEqual([
        ['research', 'completed'],
        ['write', 'pending'],
      ]);
      researchOutput = tasks[0]!.output!;
      expect(researchOutput).toContain('[offline model] tutorial answering: Research');

      // The offline model got exactly one request before the interrupt: the Researcher's.
      const calls = readCalls(callsFile('interrupted'));
      expect(calls.calls.map((call) => call.agentRole)).toEqual(['Researcher']);

      // Two copies of the interrupted state, for the CLI to resume the very same checkpoint.
      copyLocation(kind, location, copyFor('app-dir'));
      copyLocation(kind, location, copyFor('root'));
    });

    it('resumes through the app: the Writer runs on the saved research, the Researcher is not called', async () => {
      const result = await startDemo(['--resume', printedReference], {
        base,
        latencyMs: 0,
        callsFile: callsFile('app-resume'),
      }).finished;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(
        'was done in the checkpoint: its saved output is used, it is not run again',
      );

      const calls = readCalls(callsFile('app-resume'));
      expect(calls.count).toBe(1);
      expect(calls.calls[0]!.agentRole).toBe('Writer');
      expect(calls.calls[0]!.userText).toContain(researchOutput);

      const main = await list(location, 'main');
      expect(main).toHaveLength(2);
      expect(main[1]!.parentId).toBe(first.id);
      const finished = await read(location, main[1]!.id);
      const tasks = tasksOf(finished);
      expect(tasks.map((task) => task.status)).toEqual(['completed', 'completed']);
      expect(tasks[0]!.output).toBe(researchOutput);
      mainWriterOutput = tasks[1]!.output!;
      expect(result.stdout).toContain(mainWriterOutput.split('\n')[0]);
      expect(modelCallsByTask(finished)).toEqual({ 0: 1, 1: 1 });
    });

    it('resumes the same checkpoint through `pnpm crewline checkpoint resume` in apps/tutorial', async () => {
      const copy = copyFor('app-dir');
      const result = await runCrewline(['checkpoint', 'resume', firstIn(copy)], appDirectory, {
        CREWLINE_TUTORIAL_CALLS_FILE: callsFile('cli-app-dir'),
        CREWLINE_TUTORIAL_LATENCY_MS: '0',
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('Finished crew research-crew on branch main');
      // The project's crewline.config.ts was loaded: the tutorial's model answered, and only the Writer.
      const calls = readCalls(callsFile('cli-app-dir'));
      expect(calls.calls.map((call) => call.agentRole)).toEqual(['Writer']);
      expect(calls.calls[0]!.userText).toContain(researchOutput);
      const main = await list(copy, 'main');
      expect(main.map((entry) => entry.parentId)).toEqual([null, first.id]);
      const tasks = tasksOf(await read(copy, main[1]!.id));
      expect(tasks[1]!.output).toBe(mainWriterOutput);
    });

    it('resumes the same checkpoint through `pnpm crewline checkpoint resume` at the repository root (no project config)', async () => {
      const copy = copyFor('root');
      const result = await runCrewline(['checkpoint', 'resume', firstIn(copy)], repositoryRoot);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('Finished crew research-crew on branch main');
      // Rebuilt from the checkpoint alone ('offline:tutorial' is a built-in provider id): the history
      // holds one model call per task, so the research call was not made again, and the answer is
      // the one the app produced.
      const main = await list(copy, 'main');
      expect(main).toHaveLength(2);
      const finished = await read(copy, main[1]!.id);
      expect(modelCallsByTask(finished)).toEqual({ 0: 1, 1: 1 });
      expect(tasksOf(finished)[1]!.output).toBe(mainWriterOutput);
    });

    it('forks through the app with an edited research output; the original branch is untouched', async () => {
      const before = await contents(location, 'main');
      const edited = `EDITED RESEARCH (${kind}): checkpoints are cheap, re-running finished work is not.`;
      const result = await startDemo(
        ['--fork', printedReference, '--edit-research', edited, '--branch', 'what-if'],
        { base, latencyMs: 0, callsFile: callsFile('app-fork') },
      ).finished;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('Branch main is untouched');

      const calls = readCalls(callsFile('app-fork'));
      expect(calls.calls.map((call) => call.agentRole)).toEqual(['Writer']);
      expect(calls.calls[0]!.userText).toContain(edited);
      expect(calls.calls[0]!.userText).not.toContain(researchOutput);

      expect(await contents(location, 'main')).toEqual(before);
      const fork = await list(location, 'what-if');
      expect(fork).toHaveLength(1);
      expect(fork[0]!.parentId).toBe(first.id);
      expect(fork[0]!.lineageId).not.toBe(first.lineageId);
      const tasks = tasksOf(await read(location, fork[0]!.id));
      expect(tasks[0]).toMatchObject({ status: 'completed', output: edited, edited: true });
      expect(tasks[1]!.status).toBe('completed');
      // (The offline model's answer does not quote its context, so the Writer's text itself is not
      // compared with main's: the request above is what proves the edited research was used.)
      expect(result.stdout).toContain(tasks[1]!.output!.split('\n').at(-1));
      expect(result.stdout).toContain(`Research the Writer read on branch what-if: ${edited}`);
    });

    it('forks through `pnpm crewline checkpoint fork --set-output`, and `list` shows every branch', async () => {
      const before = await contents(location, 'main');
      const edited = `CLI EDIT (${kind}): a different research result.`;
      const reference = kind === 'json' ? first.reference : `${location}#${first.id}`;
      const result = await runCrewline(
        ['checkpoint', 'fork', reference, '--branch', 'cli-what-if', '--set-output', `1=${edited}`],
        appDirectory,
        { CREWLINE_TUTORIAL_CALLS_FILE: callsFile('cli-fork'), CREWLINE_TUTORIAL_LATENCY_MS: '0' },
      );
      expect(result.code, result.stderr).toBe(0);
      const calls = readCalls(callsFile('cli-fork'));
      expect(calls.calls.map((call) => call.agentRole)).toEqual(['Writer']);
      expect(calls.calls[0]!.userText).toContain(edited);
      expect(await contents(location, 'main')).toEqual(before);

      const listing = await runCrewline(['checkpoint', 'list', location], repositoryRoot);
      expect(listing.code, listing.stderr).toBe(0);
      for (const branch of ['main', 'what-if', 'cli-what-if']) {
        expect(listing.stdout).toMatch(new RegExp(`task_completed\\s+${branch}\\s`));
      }
    });
  });
}
