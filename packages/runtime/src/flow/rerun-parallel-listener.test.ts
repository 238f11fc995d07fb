import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, findRerunPoint, listen, persist, start } from './index.js';

// alpha and beta listen to one method and run side by side. The save a re-run of beta continues is
// the one written as alpha completed, while beta's crew was half done: "re-run beta" must start
// beta's crew afresh (the task text changed since), not continue its saved conversation, and keep
// alpha's finished crew as saved.

const model = offlineModel({ name: 'rerun-parallel-listener', latencyMs: 40 });
afterEach(() => model.reset());

const root = mkdtempSync(join(tmpdir(), 'crewline-rerun-parallel-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The text of beta's tasks: changed between the run and its re-run. */
let betaWording = 'Draft';

function crewOf(topic: string, steps: readonly string[], bus: EventBus): Promise<string> {
  const agent = new Agent({ role: `Writer ${topic}`, goal: 'Write', backstory: 'Plain', llm: model });
  const crew = new Crew({
    name: `${topic}-crew`,
    agents: [agent],
    tasks: steps.map((step) => new Task({ description: `${step} ${topic}`, expectedOutput: 'text', agent })),
  });
  return crew.kickoff({ bus }).then((output) => output.raw);
}

@persist({ location: join(root, 'states') })
class SideBySide extends Flow<{ alpha: string; beta: string }> {
  initialState = { alpha: '', beta: '' };
  @start() begin() {
    return 'go';
  }
  // Completes while beta's crew is between its tasks: the save written then holds beta half done.
  @listen('begin') async alpha() {
    this.state.alpha = await crewOf('apples', ['Write'], this.bus);
    await sleep(60);
    return 'alpha';
  }
  @listen('begin') async beta() {
    this.state.beta = await crewOf(
      'bananas',
      [1, 2, 3].map((step) => `${betaWording} part ${step} of`),
      this.bus,
    );
    return 'beta';
  }
}

/** What the re-run asked the model: beta's three tasks anew on the new text, nothing of alpha's. */
function expectBetaPaidAnew(): void {
  const asked = model.calls.map((call) => call.userText);
  expect(asked.filter((text) => text.includes('apples'))).toEqual([]);
  expect(asked.filter((text) => text.includes('bananas')).length).toBe(3);
  expect(asked.filter((text) => text.includes('Draft part'))).toEqual([]);
}

/** Runs state `id` once with beta's first wording, then changes the wording. */
async function runThenReword(id: string): Promise<void> {
  betaWording = 'Draft';
  await new SideBySide({ bus: new EventBus() }).kickoff({ inputs: { id } });
  expect(model.calls.length).toBe(4);
  model.reset();
  betaWording = 'Rewrite';
}

describe('a re-run from one of two methods listening to the same method', () => {
  it("runs that method's crew afresh with its new task text and keeps the other one's crew", async () => {
    await runThenReword('side-1');
    const result = await new SideBySide({ bus: new EventBus() }).kickoff({
      inputs: { id: 'side-1' },
      rerunFrom: 'beta',
    });
    expectBetaPaidAnew();
    expect(result.status).toBe('completed');
    expect(result.state.alpha).toContain('apples');
    expect(result.state.beta).toContain('Rewrite part 3');

    // Re-run again, from the first re-run's saves: alpha's crew is still held there as saved.
    model.reset();
    const again = await new SideBySide({ bus: new EventBus() }).kickoff({
      inputs: { id: 'side-1' },
      rerunFrom: 'beta',
    });
    expectBetaPaidAnew();
    expect(again.state.alpha).toBe(result.state.alpha);
  });

  it('does the same through continueFromCheckpoint, as crewline checkpoint flows rerun does', async () => {
    await runThenReword('side-2');
    const point = await findRerunPoint(join(root, 'states'), 'side-2', 'beta');
    const outcome = await continueFromCheckpoint({
      reference: point.reference,
      mode: 'resume',
      rerunFrom: 'beta',
      registry: new ProjectRegistry().register({ flows: { SideBySide } }),
      bus: new EventBus(),
    });
    expectBetaPaidAnew();
    expect(outcome.kind).toBe('flow');
  });
});
