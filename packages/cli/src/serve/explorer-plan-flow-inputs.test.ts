// The explorer's plan of a flow's continuation was made with every saved kickoff input laid under the
// ones the form changed, where the run itself (/api/runs, `continuedInputs`) is given the changes
// alone: a plan that said the inputs change the flow's state (a count its completed method raised,
// put back to its kickoff value) of a run that changes nothing of it.
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, registerProject, start } from '@crewline/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

/** Its count comes from the kickoff inputs and the completed `bump` adds 10 to it. */
class PlanCounterFlow extends Flow<{ count: number; topic: string }> {
  initialState = { count: 0, topic: '' };
  @start() bump() {
    this.state.count += 10;
  }
  @listen('bump') async report() {
    await this.ask('Report?');
  }
}
registerProject({ flows: { PlanCounterFlow } });

describe("the explorer's plan of a flow continued with an input", () => {
  const registry = cliProviderRegistry();
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let explorer: RunningExplorer;
  let pausedId: string;

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-explorer-plan-flow-inputs-');
    const location = join(directory.path, '.checkpoints');
    const provider = await providerOf('json');
    await new PlanCounterFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['flow_paused'] },
    }).kickoff({ inputs: { count: 1, topic: 'tides' } });
    pausedId = (await provider.list(provider.resolveLocation(location)))[0]!.id;
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

  it('is of the inputs the run is given: an input as saved changes nothing of the state', async () => {
    const response = await fetch(`http://127.0.0.1:${explorer.port}/api/checkpoints/${pausedId}/plan`, {
      method: 'POST',
      body: JSON.stringify({ mode: 'resume', inputs: ['topic=tides'] }),
      headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toMatchObject({ inputsChanged: false });
  });
});
