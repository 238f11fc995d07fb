import { join } from 'node:path';
import {
  Agent,
  Crew,
  continueFromCheckpoint,
  Flow,
  listen,
  registerProject,
  start,
  Task,
} from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

// Found by a review: the explorer's plan of an edited output of a completed flow answered 200
// (edited: [1], runs: []) where the fork the page then starts is refused.

const model = offlineModel({ name: 'explorer-plan-flow' });

function crewOf(prefix: string): Crew {
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write',
    backstory: 'Plain',
    llm: 'explorer-plan-flow:model',
  });
  return new Crew({
    agents: [writer],
    tasks: [
      new Task({
        name: `${prefix}-1`,
        description: `${prefix} {topic}`,
        expectedOutput: 'Lines',
        agent: writer,
      }),
    ],
  });
}

class ExplorerPlanFlow extends Flow<{ topic: string }> {
  initialState = { topic: 'tides' };
  @start()
  async research() {
    return (await crewOf('research').kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })).raw;
  }
  @listen('research')
  async write(research: string) {
    return (
      research + (await crewOf('write').kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })).raw
    );
  }
}
registerProject({ models: { 'explorer-plan-flow:model': model }, flows: { ExplorerPlanFlow } });

describe('the explorer plans a completed flow as its continuation is checked', () => {
  const registry = cliProviderRegistry();
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let explorer: RunningExplorer;
  let finished: StoredCheckpoint;

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-plan-flow-serve-');
    const location = join(directory.path, '.checkpoints');
    const provider = await providerOf('json');
    const logs = captureLogs();
    await new ExplorerPlanFlow({ checkpoint: { location, provider, onEvents: ['flow_finished'] } })
      .kickoff()
      .finally(() => logs.stop({ allowUnexpected: true }));
    finished = (await provider.list(provider.resolveLocation(location))).at(-1)!;
    await provider.close?.();
    explorer = await startExplorer({
      opened: await openLocation(location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await registry.close();
    await directory?.remove();
  });

  it("refuses (400) an edit of a completed method's task with the message the fork is refused with", async () => {
    const response = await fetch(`http://127.0.0.1:${explorer.port}/api/checkpoints/${finished.id}/plan`, {
      method: 'POST',
      headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
      body: JSON.stringify({ outputs: ['1=Other facts'], mode: 'fork' }),
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: string };
    expect(error).toMatch(
      /task 1 \(research-1\) was run by a method of flow "ExplorerPlanFlow" that already completed/,
    );
    const logs = captureLogs();
    const refusal = await continueFromCheckpoint({
      reference: finished.reference,
      mode: 'fork',
      providers: registry,
      taskOutputs: { 0: 'Other facts' },
    })
      .then(() => 'forked')
      .catch((refused: Error) => refused.message)
      .finally(() => logs.stop({ allowUnexpected: true }));
    expect(error).toBe(refusal);
  });
});
