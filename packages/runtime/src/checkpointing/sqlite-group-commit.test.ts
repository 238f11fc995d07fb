// SQLite with `groupCommit: true` commits a run's automatic checkpoints in groups,
// but a model completion's inside its event: a kill later in that turn must not make the
// resumed run pay for the call again. (That each model and tool call finds every earlier event's
// checkpoint committed is tested for SQLite and Postgres in apps/fencing-e2e, group-commit-barrier.)
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exited, startChild, tsxChildScript } from '../e2e/support/child-process.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { blockedCrew } from './test-support/blocked-crew.js';

let directory: { path: string; cleanup: () => void };
const providers: SqliteProvider[] = [];
beforeEach(() => {
  directory = temporaryDirectory('crewline-group-commit-');
});
afterEach(() => {
  for (const provider of providers.splice(0)) provider.close();
  directory.cleanup();
});

describe('SQLite group commit and a kill right after a paid model call', () => {
  const script = tsxChildScript(
    fileURLToPath(new URL('./test-support/blocked-after-completion-child.ts', import.meta.url)),
  );

  it('keeps the completion: a resume pays only for the task that had not run', {
    timeout: 60_000,
  }, async () => {
    const location = join(directory.path, 'runs.db');
    const started = startChild(script, [location]);
    // Killed inside a synchronous handler of the first task_completed, later in the very turn its
    // completion arrived (its group not committed yet, were completions grouped too).
    await started.waitFor(/^blocked$/);
    started.child.kill('SIGKILL');
    expect((await exited(started.child)).signal).toBe('SIGKILL');
    const provider = new SqliteProvider();
    providers.push(provider);
    const triggers = (await provider.list(location)).map((checkpoint) => checkpoint.trigger);
    expect(triggers).toContain('llm_call_completed');
    // The killed run's lease (1 s) runs out before the resume claims the lineage.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const { crew, llm } = blockedCrew();
    const output = await crew.kickoff({ fromCheckpoint: { restoreFrom: location, provider } });
    expect(output.tasksOutput).toHaveLength(2);
    // Only the second task's call; the first task's answer came from the checkpoint.
    expect(llm.calls).toHaveLength(1);
    expect(JSON.stringify(llm.calls[0]!.messages)).toContain('write about tides');
  });
});
