import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { type CrewRun, writeCrewRun } from '../test-support/real-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// What resume and fork tell a user of the command line is said in its words: its flags, not the
// options of the library underneath.
describe('resume and fork hints in CLI words', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let run: CrewRun;
  const crewline = (...args: string[]) => runCommand(['checkpoint', ...args], { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-continue-hints-');
    run = await writeCrewRun('sqlite', project.path);
  });
  afterAll(async () => {
    await run?.close();
    await project?.remove();
  });

  // Every provider's refusal gets the hint: the JSON lock's said "fork the checkpoint", no flag.
  it.each(['sqlite', 'json'] as const)(
    'a run another process holds (%s): the refusal names --on-conflict fork, not onConflict',
    async (kind) => {
      const where = kind === 'sqlite' ? undefined : await temporaryDirectory('crewline-continue-hints-json-');
      const held = where === undefined ? run : await writeCrewRun(kind, where.path);
      const head = held.checkpoints.at(-1)!;
      const provider: CheckpointProvider = await providerOf(kind);
      const lease = await provider.claimLease!(held.location, {
        lineageId: head.lineageId,
        owner: 'cli-hint-holder',
        checkpointId: head.id,
        holder: 'a worker of the hint test',
        // Past a minute: the library says "1 min 5 s", where a message of the CLI's own said "65.0 s".
        ttlMs: 120_000,
      });
      try {
        const refused = await runCommand(['checkpoint', 'resume', head.id], {
          cwd: where?.path ?? project.path,
        });
        expect(refused.code).toBe(1);
        expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
        // The trial: "Resuming …" and its plan were printed above the refusal of a run that never ran.
        expect(refused.stdout).toBe('');
        // Named as a lineage: "run <lineage id>" read as a run id that `runs list` does not know.
        expect(refused.stderr).toContain(
          `crewline: lineage "${head.lineageId}" (the RUN of crewline checkpoint list, not a run id of crewline runs list) is being continued by a worker of the hint test, whose lease has`,
        );
        // The library's one message (leaseHeldMessage), not one written again beside it.
        expect(refused.stderr).toMatch(/whose lease has 1 min \d+ s left; /);
        expect(refused.stderr).toContain('--on-conflict fork');
        expect(refused.stderr).not.toContain('onConflict');
        // The holder (this test's process) runs on this machine: waiting for its lease to run out
        // would not help, and a dead one would have been taken over at once.
        expect(refused.stderr).toContain('wait for it to end (its process is running on this machine)');
      } finally {
        await provider.releaseLease!(held.location, lease);
        await provider.close?.();
        if (where !== undefined) {
          await held.close();
          await where.remove();
        }
      }
    },
  );

  it('--quiet prints the result only: no "Forking ... from ..." heading', async () => {
    const result = await crewline('fork', run.checkpoints[1]!.id, '--quiet');
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('Forking');
    expect(result.stdout).not.toMatch(/^\s+from /m);
    expect(result.stdout).toMatch(/^Finished crew Research crew on branch fork\//);
  });
});
