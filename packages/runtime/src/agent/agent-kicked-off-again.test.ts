// One standalone Agent kicked off several times in one run (a loop in a flow method): each kickoff
// is an entity of its own in the checkpoint, and a resume pays only the kickoffs not done yet.
import { EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Flow, start } from '../flow/index.js';
import { captureLogs, type LogCapture, offlineModel } from '../testing/index.js';
import { Agent } from './agent.js';

const model = offlineModel({ name: 'agent-kicked-off-again' });

// Each resume starts from a checkpoint its run went past: it continues on a new branch, and says so.
const olderWarning = 'is not the latest of its run';
let logs: LogCapture;

beforeEach(() => {
  logs = captureLogs();
});

afterEach(() => {
  model.reset();
  logs.stop();
});

class Translate extends Flow<{ out: string[] }> {
  initialState = { out: [] as string[] };
  @start() async translate() {
    const agent = new Agent({ role: 'Translator', goal: 'Translate', backstory: 'Exact', llm: model });
    for (const word of ['alpha', 'beta', 'gamma']) {
      const answer = await agent.kickoff(`Translate ${word}`, { bus: this.bus });
      this.state.out.push(answer.raw.match(/Translate \w+/)?.[0] ?? '?');
    }
    return this.state.out.join(' | ');
  }
}

describe('one agent object kicked off in a loop inside a flow method', () => {
  it('resumed after two of three kickoffs answers each from its own work and pays only the third', async () => {
    const provider = new InMemoryProvider();
    const uninterrupted = await new Translate({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['llm_call_completed'] },
    }).kickoff();
    expect(uninterrupted.output).toBe('Translate alpha | Translate beta | Translate gamma');
    const checkpoints = await provider.list('mem');
    expect(checkpoints).toHaveLength(3);
    const second = checkpoints[1]!;
    const document = await readDocument(provider, 'mem', second.id);
    const agents = document.entities.filter((entity) => entity.kind === 'agent');
    expect(agents).toHaveLength(2);
    expect(new Set(agents.map((agent) => agent.id)).size).toBe(2);

    model.reset();
    const restored = await Translate.fromCheckpoint(
      { restoreFrom: `mem#${second.id}`, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    logs.expect(olderWarning);
    expect(model.calls.map((call) => call.userText.match(/Translate \w+/)?.[0])).toEqual(['Translate gamma']);
    expect(resumed.output).toBe(uninterrupted.output);
  });
});
