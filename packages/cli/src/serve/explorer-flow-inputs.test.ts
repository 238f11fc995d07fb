// Review r1 of 5fd3465: the explorer sent a flow's continuation every saved kickoff input with the
// ones the form changed; merged into the state again, they undid what completed methods changed.
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, registerProject, start } from '@crewline/runtime';
import { captureLogs } from '@crewline/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import type { RunRecord } from './explorer-runs.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

const secret = 'sk-live-0123456789abcdefghij';

/** Its count comes from the kickoff inputs and the completed `bump` adds 10 to it. */
class ExplorerCounterFlow extends Flow<{ count: number; apiKey: string }> {
  initialState = { count: 0, apiKey: '' };
  @start() bump() {
    this.state.count += 10;
    return 'bumped';
  }
  @listen('bump') async report() {
    await this.ask('Report?');
    return `count ${this.state.count}, ${this.state.apiKey === secret ? 'with the key' : 'without it'}`;
  }
}
registerProject({ flows: { ExplorerCounterFlow } });

describe('the explorer continuing a flow with an input given', () => {
  const registry = cliProviderRegistry();
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let explorer: RunningExplorer;
  let pausedId: string;
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
    directory = await temporaryDirectory('crewline-explorer-flow-inputs-');
    const location = join(directory.path, '.checkpoints');
    const provider = await providerOf('json');
    const result = await new ExplorerCounterFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['flow_paused', 'flow_finished'] },
    }).kickoff({ inputs: { count: 1, apiKey: secret } });
    if (result.status !== 'paused') throw new Error('expected a pause');
    pausedId = (await provider.list(provider.resolveLocation(location))).find(
      (checkpoint) => checkpoint.trigger === 'flow_paused',
    )!.id;
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

  it('merges only that input into the state: what completed methods changed stays', async () => {
    const logs = captureLogs();
    const response = await api('/api/runs', {
      checkpoint: pausedId,
      mode: 'resume',
      answer: 'yes',
      inputs: [`apiKey=${secret}`],
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const record = await untilEnded(((await response.json()) as RunRecord).id).finally(() =>
      logs.stop({ allowUnexpected: true }),
    );
    expect(record.status, record.error).toBe('finished');
    expect(record.output).toContain('count 11, with the key');
  }, 90_000);
});
