// Found by a new-user trial of the explorer: a flow paused for human input could not be answered
// from the page. POST /api/runs took an unknown "answer" field silently (202), and each attempt paused
// again, writing one more flow_paused checkpoint. The request now takes `answer` (the CLI's --answer,
// through the same runtime path) and refuses fields it does not know.
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, registerProject, start } from '@crewline/runtime';
import { captureLogs } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import type { RunRecord } from './explorer-runs.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

class ExplorerAnswerFlow extends Flow<{ verdict: string }> {
  initialState = { verdict: '' };

  @start() draft() {
    return 'a short essay';
  }

  @listen('draft') async approve(draft: string) {
    this.state.verdict = await this.ask(`Publish "${draft}" today?`);
    return this.state.verdict;
  }

  @listen('approve') publish(verdict: string) {
    return verdict === 'yes' ? 'PUBLISHED' : 'DISCARDED';
  }
}
registerProject({ flows: { ExplorerAnswerFlow } });

describe('the explorer answers a paused flow', () => {
  const registry = cliProviderRegistry();
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let explorer: RunningExplorer;
  let paused: StoredCheckpoint;
  let answered: RunRecord | undefined;
  let location: string;
  const api = (path: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${explorer.port}${path}`, {
      ...(body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) }),
      headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
    });
  const untilEnded = async (id: string): Promise<RunRecord> => {
    for (let waited = 0; ; waited += 50) {
      const record = ((await (await api('/api/runs')).json()) as RunRecord[]).find((run) => run.id === id)!;
      if (record.status !== 'running') return record;
      if (waited > 60_000) throw new Error('the run did not end within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-explorer-answer-');
    location = join(directory.path, '.checkpoints');
    const provider = await providerOf('json');
    const result = await new ExplorerAnswerFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['flow_paused', 'flow_finished'] },
    }).kickoff();
    if (result.status !== 'paused') throw new Error('expected a pause');
    paused = (await provider.list(provider.resolveLocation(location))).find(
      (checkpoint) => checkpoint.trigger === 'flow_paused',
    )!;
    await provider.close?.();
    explorer = await startExplorer({
      opened: await openLocation(location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
      allowResume: true,
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await registry.close();
    await directory?.remove();
  });

  it('refuses (400) a field the run request does not know, naming it, and starts nothing', async () => {
    const response = await api('/api/runs', { checkpoint: paused.id, mode: 'resume', answr: 'yes' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain(
      'unknown field "answr" in the run request; it takes checkpoint, mode, branch, inputs, outputs, answer and head',
    );
    expect((await (await api('/api/runs')).json()) as RunRecord[]).toEqual([]);
  });

  it('shows the question, and continues the flow with the answer given (no second pause)', async () => {
    const detail = (await (await api(`/api/checkpoints/${paused.id}`)).json()) as {
      entities: { pause?: { method: string; message: string } }[];
    };
    expect(detail.entities[0]!.pause).toMatchObject({
      method: 'approve',
      message: 'Publish "a short essay" today?',
    });
    const logs = captureLogs();
    const response = await api('/api/runs', { checkpoint: paused.id, mode: 'fork', answer: 'yes' });
    expect(response.status).toBe(202);
    const record = await untilEnded(((await response.json()) as RunRecord).id).finally(() =>
      logs.stop({ allowUnexpected: true }),
    );
    expect(record.status).toBe('finished');
    expect(record.output).toContain('PUBLISHED');
    answered = record;
  }, 90_000);

  it('says, of a run that ended paused again (no answer given), the question it waits for', async () => {
    const logs = captureLogs();
    const response = await api('/api/runs', { checkpoint: paused.id, mode: 'fork' });
    expect(response.status).toBe(202);
    const record = await untilEnded(((await response.json()) as RunRecord).id).finally(() =>
      logs.stop({ allowUnexpected: true }),
    );
    expect(record.status).toBe('paused');
    expect(record.pause).toEqual({ method: 'approve', message: 'Publish "a short essay" today?' });
  }, 90_000);

  it('refuses (400) an answer to a checkpoint whose flow does not wait for one', async () => {
    // The fork's checkpoint once the flow finished: it waits for nothing.
    const provider = await providerOf('json');
    const finished = (
      await provider.list(provider.resolveLocation(location), { branch: answered!.branch! })
    ).at(-1)?.id;
    await provider.close?.();
    expect(finished).toBeDefined();
    const response = await api('/api/runs', { checkpoint: finished, mode: 'resume', answer: 'yes' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain(
      'flow ExplorerAnswerFlow does not wait for an answer in this checkpoint (completed), so answer has nothing to answer; leave the answer empty',
    );
    const wrongType = await api('/api/runs', { checkpoint: paused.id, mode: 'resume', answer: 3 });
    expect(wrongType.status).toBe(400);
    expect(((await wrongType.json()) as { error: string }).error).toContain('answer must be a string');
  });
});
