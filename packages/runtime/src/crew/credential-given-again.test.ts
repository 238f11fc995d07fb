import { EventBus, REDACTED } from '@crewline/events';
import { type CheckpointDocument, readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { lookupTool, toolUsingModel } from '../e2e/support/fixtures.js';
import { Flow, start } from '../flow/index.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { interruptedTasksOutcome } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';
import { changesInputs } from './interrupted-tasks.js';

// Review R4a finding 1: a checkpoint stores a credential as [REDACTED], so the key given again on a
// resume (as the worker's retry and fork, the CLI's --input and the refusal of a resume without it
// do) always differed from what was saved, and the task interrupted mid-conversation started over:
// its checkpointed model call was paid again.

const secret = 'sk-live-0123456789abcdefghij';

function researchCrew(
  model: OfflineModel,
  provider?: InMemoryProvider,
  description = 'Research {topic}',
): Crew {
  const agent = new Agent({
    role: 'Researcher',
    goal: 'Research',
    backstory: 'Calm',
    llm: model,
    tools: [lookupTool],
  });
  return new Crew({
    agents: [agent],
    tasks: [new Task({ description, expectedOutput: 'notes', agent })],
    ...(provider ? { checkpoint: { location: 'mem', provider, onEvents: ['*'] } } : {}),
  });
}

/** The checkpoint written after the task's first model call (a tool call), its second not made. */
async function afterFirstCall(
  provider: InMemoryProvider,
): Promise<{ id: string; document: CheckpointDocument }> {
  const inConversation = (await provider.list('mem')).find((each) => each.trigger === 'llm_call_completed')!;
  const document = await readDocument(provider, 'mem', inConversation.id);
  expect(document.events.filter((event) => event.type === 'llm_call_completed')).toHaveLength(1);
  return { id: inConversation.id, document };
}

async function storedText(provider: InMemoryProvider): Promise<string> {
  const stored = await Promise.all(
    (await provider.list('mem')).map((each) => readDocument(provider, 'mem', each.id)),
  );
  return JSON.stringify(stored);
}

describe('a crew resumed with its credential input given again', () => {
  it('continues the interrupted task: its checkpointed model call is not made again', async () => {
    const provider = new InMemoryProvider();
    const model = toolUsingModel(); // one tool call, then an answer: two model calls
    await researchCrew(model, provider).kickoff({ inputs: { apiKey: secret, topic: 'kelp' } });
    expect(model.calls).toHaveLength(2);
    const { id, document } = await afterFirstCall(provider);
    expect(interruptedTasksOutcome(document, { apiKey: secret, topic: 'kelp' })).toEqual({
      action: 'continue',
    });
    model.reset();

    const output = await researchCrew(model).kickoff({
      inputs: { apiKey: secret },
      fromCheckpoint: { restoreFrom: `mem#${id}`, provider },
    });

    expect(model.calls).toHaveLength(1);
    expect(output.raw).toBeTruthy();
    expect(await storedText(provider)).not.toContain(secret);
  });

  it('still starts the task over when another input changes', async () => {
    const provider = new InMemoryProvider();
    const model = toolUsingModel();
    await researchCrew(model, provider).kickoff({ inputs: { apiKey: secret, topic: 'kelp' } });
    const { id, document } = await afterFirstCall(provider);
    expect(interruptedTasksOutcome(document, { apiKey: secret, topic: 'coral' })).toMatchObject({
      action: 'restart',
      cause: 'changed-inputs',
    });
    model.reset();

    await researchCrew(model).kickoff({
      inputs: { apiKey: secret, topic: 'coral' },
      fromCheckpoint: { restoreFrom: `mem#${id}`, provider },
    });

    // Started over: the tool call again, then the answer, the first prompt about the new topic.
    expect(model.calls).toHaveLength(2);
    expect(JSON.stringify(model.calls[0]!.messages)).toContain('Research coral');
  });

  it('starts over a task whose prompt was filled with it: its saved prompt holds [REDACTED]', async () => {
    const provider = new InMemoryProvider();
    const model = toolUsingModel();
    const description = 'Research {topic} with key {apiKey}';
    await researchCrew(model, provider, description).kickoff({ inputs: { apiKey: secret, topic: 'kelp' } });
    const { id, document } = await afterFirstCall(provider);
    expect(interruptedTasksOutcome(document, { apiKey: secret, topic: 'kelp' })).toMatchObject({
      action: 'restart',
      cause: 'credential-given-again',
    });
    expect(interruptedTasksOutcome(document, { topic: 'kelp' })).toEqual({ action: 'continue' });
    model.reset();

    await researchCrew(model, undefined, description).kickoff({
      inputs: { apiKey: secret },
      fromCheckpoint: { restoreFrom: `mem#${id}`, provider },
    });

    // Continued, the model would have been sent the text [REDACTED] where the key was.
    expect(model.calls).toHaveLength(2);
    expect(JSON.stringify(model.calls[0]!.messages)).toContain(`with key ${secret}`);
    expect(JSON.stringify(model.calls)).not.toContain(REDACTED);
    expect(await storedText(provider)).not.toContain(secret);
  });
});

class Researching extends Flow<{ apiKey: string; topic: string; notes: string }> {
  static model = toolUsingModel();
  initialState = { apiKey: '', topic: '', notes: '' };
  @start() async research() {
    // The crew's tool needs the key: the method hands it on, as its kickoff input.
    const output = await researchCrew(Researching.model).kickoff({
      inputs: { apiKey: this.state.apiKey, topic: this.state.topic },
      bus: this.bus,
    });
    this.state.notes = output.raw;
    return output.raw;
  }
}

describe('a flow resumed with its credential given again (the worker retry and fork, --input)', () => {
  it('does not pay again for the checkpointed model call of the task it was interrupted in', async () => {
    const provider = new InMemoryProvider();
    const model = Researching.model;
    model.reset();
    await new Researching({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff({
      inputs: { apiKey: secret, topic: 'kelp' },
    });
    expect(model.calls).toHaveLength(2);
    const { id, document } = await afterFirstCall(provider);
    // What the CLI's plan says before anything runs agrees with what the run does.
    expect(interruptedTasksOutcome(document, { apiKey: secret })).toEqual({ action: 'continue' });
    model.reset();

    const restored = await Researching.fromCheckpoint(
      { restoreFrom: `mem#${id}`, provider },
      { bus: new EventBus() },
    );
    await restored.kickoff({ inputs: { apiKey: secret } });

    expect(model.calls).toHaveLength(1);
    expect(restored.state.notes).toBeTruthy();
    expect(await storedText(provider)).not.toContain(secret);
  });
});

class KeyInPrompt extends Flow<{ apiKey: string; topic: string; notes: string }> {
  static model = toolUsingModel();
  initialState = { apiKey: '', topic: '', notes: '' };
  @start() async research() {
    const crew = researchCrew(KeyInPrompt.model, undefined, 'Research {topic} with key {apiKey}');
    const output = await crew.kickoff({
      inputs: { apiKey: this.state.apiKey, topic: this.state.topic },
      bus: this.bus,
    });
    this.state.notes = output.raw;
    return output.raw;
  }
}

describe('a flow whose interrupted crew task was given the credential in its prompt', () => {
  it('is planned as the flow deciding, and its crew starts the task over with the key', async () => {
    const provider = new InMemoryProvider();
    const model = KeyInPrompt.model;
    model.reset();
    await new KeyInPrompt({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff({
      inputs: { apiKey: secret, topic: 'kelp' },
    });
    const { id, document } = await afterFirstCall(provider);
    expect(interruptedTasksOutcome(document, { apiKey: secret })).toMatchObject({
      action: 'flow-decides',
      cause: 'credential-given-again',
    });
    model.reset();

    const restored = await KeyInPrompt.fromCheckpoint(
      { restoreFrom: `mem#${id}`, provider },
      { bus: new EventBus() },
    );
    await restored.kickoff({ inputs: { apiKey: secret } });

    expect(model.calls).toHaveLength(2);
    expect(JSON.stringify(model.calls[0]!.messages)).toContain(`with key ${secret}`);
    expect(await storedText(provider)).not.toContain(secret);
  });
});

describe('changesInputs', () => {
  it('takes a value saved as [REDACTED] exactly, at the top or in a field, as given again', () => {
    expect(changesInputs({ apiKey: REDACTED, topic: 'kelp' }, { apiKey: secret, topic: 'kelp' })).toBe(false);
    expect(
      changesInputs({ service: { token: REDACTED, url: 'u' } }, { service: { token: secret, url: 'u' } }),
    ).toBe(false);
    expect(changesInputs({ tokens: ['a', REDACTED] }, { tokens: ['a', secret] })).toBe(false);
    expect(changesInputs({ apiKey: REDACTED }, { apiKey: REDACTED })).toBe(false);
  });

  it('still sees every other change beside it', () => {
    expect(changesInputs({ apiKey: REDACTED, topic: 'kelp' }, { apiKey: secret, topic: 'coral' })).toBe(true);
    expect(
      changesInputs({ service: { token: REDACTED, url: 'u' } }, { service: { token: secret, url: 'v' } }),
    ).toBe(true);
    expect(changesInputs({ service: { token: REDACTED } }, { service: { token: secret, extra: 1 } })).toBe(
      true,
    );
    expect(changesInputs({ tokens: ['a', REDACTED] }, { tokens: ['a', secret, 'b'] })).toBe(true);
    // A credential redacted inside a longer text: the text given reads as saved around the marker, or
    // it is a change (review RG-2: an address's password; changes-inputs-values.test.ts).
    expect(changesInputs({ note: `key ${REDACTED}` }, { note: `key ${secret}` })).toBe(false);
    expect(changesInputs({ note: `key ${REDACTED}` }, { note: `token ${secret}` })).toBe(true);
    expect(changesInputs({ topic: 'kelp' }, { apiKey: secret })).toBe(true);
  });

  it('takes a record given in another key order as the same (review RC: it was a change, restarting tasks)', () => {
    expect(changesInputs({ config: { a: 1, b: 2 } }, { config: { b: 2, a: 1 } })).toBe(false);
    expect(
      changesInputs(
        { service: { token: REDACTED, url: 'u', options: [{ x: 1, y: 2 }] } },
        { service: { options: [{ y: 2, x: 1 }], url: 'u', token: secret } },
      ),
    ).toBe(false);
    expect(changesInputs({ config: { a: 1, b: 2 } }, { config: { b: 2, a: 3 } })).toBe(true);
  });
});
