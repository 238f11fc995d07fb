import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Agent, Crew, Flow, listen, persist, registerProject, start, Task } from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// `flows rerun --from beta`, where alpha and beta both listen to one method: the save it continues
// is the one written as alpha completed, while beta's crew was half done. The re-run runs beta's crew
// from scratch on its current task text (trial: it continued the saved conversation on the old one).

const model = offlineModel({ name: 'flows-rerun-parallel', latencyMs: 40 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The text of beta's tasks: changed between the run and its re-run. */
let betaWording = 'Draft';

async function crewOf(topic: string, steps: readonly string[], bus: EventBus): Promise<string> {
  const agent = new Agent({ role: `Writer ${topic}`, goal: 'Write', backstory: 'Plain', llm: model });
  const crew = new Crew({
    name: `${topic}-crew`,
    agents: [agent],
    tasks: steps.map((step) => new Task({ description: `${step} ${topic}`, expectedOutput: 'text', agent })),
  });
  return (await crew.kickoff({ bus })).raw;
}

function sideBySide(location: string) {
  @persist({ location })
  class SideBySideCli extends Flow<{ alpha: string; beta: string }> {
    initialState = { alpha: '', beta: '' };
    @start() begin() {
      return 'go';
    }
    // Completes while beta's crew is between its tasks.
    @listen('begin') async alpha() {
      this.state.alpha = await crewOf('apples', ['Write'], this.bus);
      await sleep(60);
      return 'alpha';
    }
    @listen('begin') async beta() {
      const steps = [1, 2, 3].map((step) => `${betaWording} part ${step} of`);
      this.state.beta = await crewOf('bananas', steps, this.bus);
      return 'beta';
    }
  }
  return SideBySideCli;
}

describe('flows rerun --from a method running beside another listener of the same method', () => {
  let project: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    project = await temporaryDirectory();
  });
  afterAll(async () => {
    await project.remove();
  });

  it("runs that method's crew afresh on its new task text and keeps the other one's", async () => {
    const SideBySideCli = sideBySide(join(project.path, '.checkpoints'));
    registerProject({ flows: { SideBySideCli } });
    await new SideBySideCli({ bus: new EventBus() }).kickoff({ inputs: { id: 'side-1' } });
    expect(model.calls.length).toBe(4);
    model.reset();
    betaWording = 'Rewrite';
    const logs = captureLogs();
    const result = await runCommand(['checkpoint', 'flows', 'rerun', 'side-1', '--from', 'beta'], {
      cwd: project.path,
    }).finally(() => logs.stop({ allowUnexpected: true }));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const asked = model.calls.map((call) => call.userText);
    expect(asked.filter((text) => text.includes('apples'))).toEqual([]);
    expect(asked.filter((text) => text.includes('bananas')).length).toBe(3);
    expect(asked.filter((text) => text.includes('Draft part'))).toEqual([]);
  });
});
