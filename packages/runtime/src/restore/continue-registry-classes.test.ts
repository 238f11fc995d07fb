import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Flow, listen, start } from '../flow/index.js';
import { ProjectRegistry, projectRegistry, registerProject } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { captureLogs, type LogCapture } from '../testing/capture-logs.js';
import { offlineModel } from '../testing/index.js';
import { continueFromCheckpoint } from './continue-from-checkpoint.js';

class Money {
  constructor(readonly cents: number) {}
  format(): string {
    return `${(this.cents / 100).toFixed(2)} EUR`;
  }
}

class Budget {
  constructor(readonly cents: number) {}
}

class Till extends Flow<{ price: Money | null }> {
  initialState = { price: null as Money | null };

  @start() quote() {
    this.state.price = new Money(250);
    return new Money(100);
  }

  @listen('quote') charge(fee: Money) {
    return `${fee.format()} + ${(this.state.price as Money).format()}`;
  }
}

function budgetCrew(location: string): Crew {
  const agent = new Agent({ role: 'Planner', goal: 'Plan', backstory: 'Careful', llm: offlineModel() });
  return new Crew({
    name: 'budget-crew',
    agents: [agent],
    tasks: [
      new Task({ description: 'Plan {topic}', expectedOutput: 'a plan', agent }),
      new Task({ description: 'Review the plan', expectedOutput: 'a verdict', agent }),
    ],
    checkpoint: { location },
  });
}

/** The oldest checkpoint at `location` (a JSON directory). */
async function firstCheckpoint(location: string): Promise<string> {
  const provider = new JsonProvider();
  const [first] = await provider.list(provider.resolveLocation(location));
  if (!first) throw new Error(`expected a checkpoint in ${location}`);
  return first.reference;
}

const root = mkdtempSync(join(tmpdir(), 'crewline-continue-classes-'));
const tillLocation = join(root, 'till');
const crewLocation = join(root, 'crew');

/**
 * The checkpoints are written by runs that know Money and Budget (in practice another process, whose
 * crewline.config.ts registered them): registered for the writes, then taken out of this process's
 * registry again (once, so the codec cache sees the count change), so that only the registry given to
 * continueFromCheckpoint knows the classes.
 */
beforeAll(async () => {
  registerProject({ classes: [Money, Budget] });
  try {
    await new Till({
      bus: new EventBus(),
      checkpoint: { location: tillLocation, onEvents: ['method_execution_finished'] },
    }).kickoff();
    await budgetCrew(crewLocation).kickoff({ inputs: { topic: 'a trip', budget: new Budget(1250) } });
  } finally {
    const registered = projectRegistry().classes;
    for (const entry of [Money, Budget]) registered.splice(registered.indexOf(entry), 1);
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let logs: LogCapture;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => logs.stop());

describe('continuing with classes given only in ContinueOptions.registry', () => {
  it('restores flow state and method outputs as instances and writes them again without a warning', async () => {
    const result = await continueFromCheckpoint({
      reference: await firstCheckpoint(tillLocation),
      mode: 'resume',
      registry: new ProjectRegistry().register({ flows: { Till }, classes: [Money] }),
      bus: new EventBus(),
    });
    expect(result.output).toBe('1.00 EUR + 2.50 EUR');
    // The resume branches off (the checkpoint after charge exists); nothing else is logged.
    logs.expect('is not the latest of its run');
  });

  it("restores a crew's kickoff inputs as instances: no 'restored as a plain object' warning", async () => {
    const result = await continueFromCheckpoint({
      reference: await firstCheckpoint(crewLocation),
      mode: 'resume',
      registry: new ProjectRegistry().register({
        classes: [Budget],
        models: { 'offline:default': offlineModel() },
      }),
      bus: new EventBus(),
    });
    expect(result.output).toContain('[offline model]');
    logs.expect('is not the latest of its run');
  });
});
