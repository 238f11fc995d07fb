import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError, EventBus, REDACTED } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { checkContinuation } from '../restore/check-continuation.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { loadRestoreTarget } from '../restore/load-restore-target.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, listen, persist, start } from './index.js';
import { redactedStatePaths } from './redacted-state.js';

// Found by the team: a flow state's credential-named field is checkpointed as [REDACTED] (good), but
// every way of continuing that checkpoint handed the methods left to run that text as the field's
// value, silently: a pending method sent `[REDACTED]` as its key.

const secret = 'sk-live-0123456789abcdefghij';
const otherSecret = 'sk-live-9876543210zyxwvutsrq';
/** The key each run of `charge` used, in order. */
const sent: unknown[] = [];
const root = mkdtempSync(join(tmpdir(), 'crewline-redacted-state-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  sent.length = 0;
});

class Billing extends Flow<{ apiKey: string; customer: string }> {
  initialState = { apiKey: '', customer: 'ada' };
  @start() prepare() {
    return 'prepared';
  }
  @listen('prepare') async charge() {
    const answer = await this.ask('Charge the customer?');
    sent.push(this.state.apiKey);
    return `${answer}: charged ${this.state.customer}`;
  }
}

class Nightly extends Flow<{ database: { host: string; password: string }; rows: number }> {
  initialState = { database: { host: 'db.local', password: '' }, rows: 0 };
  @start() connect() {
    return 'connected';
  }
  @listen('connect') async copy() {
    await this.ask('Copy the rows?');
    sent.push(this.state.database.password);
    return 'copied';
  }
}

class Persisted extends Flow<{ apiKey: string }> {
  initialState = { apiKey: '' };
  @start() @persist() prepare() {
    return 'prepared';
  }
  @listen('prepare') @persist() async charge() {
    await this.ask('Charge?');
    sent.push(this.state.apiKey);
    return 'charged';
  }
}

/** Billing paused at its question, its key given at kickoff: in memory, or in a JSON directory. */
async function pausedBilling(directory?: string) {
  const provider = new InMemoryProvider();
  const checkpoint = directory === undefined ? { location: 'mem', provider } : { location: directory };
  const flow = new Billing({ bus: new EventBus(), checkpoint });
  const paused = await flow.kickoff({ inputs: { apiKey: secret } });
  if (paused.status !== 'paused' || paused.pause.resumeFrom === undefined)
    throw new Error('expected a pause');
  return { provider, flow, reference: paused.pause.resumeFrom };
}

/** The refusal a continuation of a Billing checkpoint gives without the key, checked. */
function expectRefused(error: unknown): void {
  expect(CrewlineError.hasCode(error, 'invalid_argument')).toBe(true);
  const refusal = error as CrewlineError;
  expect(refusal.details?.redactedState).toEqual(['apiKey']);
  expect(refusal.message).toContain('state field "apiKey" is stored as [REDACTED]');
  expect(refusal.message).toContain('inputs: { apiKey: … }');
  expect(refusal.message).toContain('--input apiKey=<value>');
  expect(refusal.message).not.toContain(secret);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error,
  );
}

describe('a restored flow state holding a credential stored as [REDACTED]', () => {
  it('is checkpointed redacted (what the rest of this file continues from)', async () => {
    const { provider, reference } = await pausedBilling();
    const restored = await Billing.fromCheckpoint(
      { restoreFrom: reference, provider },
      { bus: new EventBus() },
    );
    expect(restored.state.apiKey).toBe(REDACTED);
  });

  it('fromCheckpoint(...).resume(answer) is refused before any method runs or any checkpoint is written', async () => {
    const { provider, reference } = await pausedBilling();
    const before = (await provider.list('mem')).length;
    const restored = await Billing.fromCheckpoint(
      { restoreFrom: reference, provider },
      { bus: new EventBus() },
    );
    const error = await rejection(restored.resume('yes'));
    expectRefused(error);
    expect((error as CrewlineError).message).toContain(`checkpoint ${reference.split('#')[1]}`);
    expect(sent).toEqual([]);
    expect((await provider.list('mem')).length).toBe(before);
    // The same object then continues the same checkpoint once the key is given.
    const result = await restored.resume('yes', { inputs: { apiKey: otherSecret } });
    expect(result.output).toBe('yes: charged ada');
    expect(sent).toEqual([otherSecret]);
  });

  it('fromCheckpoint(...).kickoff() is refused; with the key as an input the method gets it', async () => {
    const { provider, reference } = await pausedBilling();
    const restored = await Billing.fromCheckpoint(
      { restoreFrom: reference, provider },
      { bus: new EventBus() },
    );
    expectRefused(await rejection(restored.kickoff()));
    const again = await Billing.fromCheckpoint({ restoreFrom: reference, provider }, { bus: new EventBus() });
    const paused = await again.kickoff({ inputs: { apiKey: secret } });
    // Asked again (no answer given); the next answer reaches the method with the real key.
    expect(paused.status).toBe('paused');
    const result = await again.resume('yes');
    expect(result.status).toBe('completed');
    expect(sent).toEqual([secret]);
  });

  it('runs with a key set on the restored state before the resume', async () => {
    const { provider, reference } = await pausedBilling();
    const restored = await Billing.fromCheckpoint(
      { restoreFrom: reference, provider },
      { bus: new EventBus() },
    );
    restored.state.apiKey = secret;
    const result = await restored.resume('yes');
    expect(result.output).toBe('yes: charged ada');
    expect(sent).toEqual([secret]);
  });

  it('the static Flow.resume(reference, answer) is refused; its inputs option gives the key', async () => {
    const { provider, reference } = await pausedBilling();
    expectRefused(
      await rejection(Billing.resume({ restoreFrom: reference, provider }, 'yes', { bus: new EventBus() })),
    );
    expect(sent).toEqual([]);
    const result = await Billing.resume({ restoreFrom: reference, provider }, 'yes', {
      bus: new EventBus(),
      inputs: { apiKey: secret },
    });
    expect(result.output).toBe('yes: charged ada');
    expect(sent).toEqual([secret]);
  });

  it('a fork is refused; with the key as an input it runs with it', async () => {
    const { provider, reference } = await pausedBilling();
    const before = (await provider.list('mem')).length;
    const fork = await Billing.fork(
      { restoreFrom: reference, provider },
      { bus: new EventBus(), branch: 'retry' },
    );
    expectRefused(await rejection(fork.resume('yes')));
    expect((await provider.list('mem')).length).toBe(before);
    const result = await fork.resume('yes', { inputs: { apiKey: secret } });
    expect(result.output).toBe('yes: charged ada');
    expect(sent).toEqual([secret]);
  });

  it('a resume of the pause by the object that paused gets the key it holds, not [REDACTED]', async () => {
    const { flow } = await pausedBilling();
    const result = await flow.resume('yes');
    expect(result.output).toBe('yes: charged ada');
    expect(sent).toEqual([secret]);
  });

  it('a finished flow is not refused: it runs nothing and gives its output back', async () => {
    const provider = new InMemoryProvider();
    const flow = new Billing({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['flow_finished'] },
    });
    await flow.kickoff({ inputs: { apiKey: secret } });
    const finished = await flow.resume('yes');
    const restored = await Billing.fromCheckpoint(
      { restoreFrom: finished.checkpoint!, provider },
      { bus: new EventBus() },
    );
    expect(restored.state.apiKey).toBe(REDACTED);
    const again = await restored.kickoff();
    expect(again.output).toBe('yes: charged ada');
    expect(sent).toEqual([secret]);
  });

  it('names a nested field by its path, and says to pass its whole top-level field', async () => {
    const provider = new InMemoryProvider();
    const paused = await new Nightly({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider },
    }).kickoff({
      inputs: { database: { host: 'db.local', password: secret } },
    });
    const reference = paused.pause!.resumeFrom!;
    const restored = await Nightly.fromCheckpoint(
      { restoreFrom: reference, provider },
      { bus: new EventBus() },
    );
    const error = (await rejection(restored.resume('yes'))) as CrewlineError;
    expect(error.details).toMatchObject({ redactedState: ['database.password'], inputs: ['database'] });
    expect(error.message).toContain('state field "database.password"');
    expect(error.message).toContain('give "database" with every field it holds');
    expect(error.message).toContain('--input database:=<json>');
    const result = await restored.resume('yes', {
      inputs: { database: { host: 'db.local', password: secret } },
    });
    expect(result.output).toBe('copied');
    expect(sent).toEqual([secret]);
  });

  it('a persisted state kicked off again by its id is refused; with the key it runs with it', async () => {
    const location = join(root, 'persisted');
    const paused = await new Persisted({ bus: new EventBus(), checkpoint: { location } }).kickoff({
      inputs: { apiKey: secret },
    });
    const id = paused.stateId;
    expectRefused(await rejection(Persisted.resume({ id, location }, 'yes', { bus: new EventBus() })));
    expect(sent).toEqual([]);
    const result = await Persisted.resume({ id, location }, 'yes', {
      bus: new EventBus(),
      inputs: { apiKey: secret },
    });
    expect(result.output).toBe('charged');
    expect(sent).toEqual([secret]);
  });
});

class Charger extends Flow<{ apiKey: string; prepared: boolean }> {
  initialState = { apiKey: '', prepared: false };
  @start() prepare() {
    this.state.prepared = true;
    return 'prepared';
  }
  @listen('prepare') charge() {
    sent.push(this.state.apiKey);
    return 'charged';
  }
}

/** Hands its key to a flow it kicks off in its method, as kickoff inputs (merged into that state). */
class Shop extends Flow<{ apiKey: string }> {
  initialState = { apiKey: '' };
  @start() async checkout() {
    return (await new Charger().kickoff({ inputs: { apiKey: this.state.apiKey } })).output;
  }
}

describe('a flow kicked off in a method of a restored flow', () => {
  it('gets the key its parent is given again: the parent is refused first, then passes it on', async () => {
    const provider = new InMemoryProvider();
    await new Shop({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff({ inputs: { apiKey: secret } });
    expect(sent).toEqual([secret]);
    sent.length = 0;
    // After the child's first method: the child's state and the parent's both hold [REDACTED].
    const afterPrepare = (await provider.list('mem'))[0]!;
    const restoreFrom = `mem#${afterPrepare.id}`;
    const restored = await Shop.fromCheckpoint({ restoreFrom, provider }, { bus: new EventBus() });
    expectRefused(await rejection(restored.kickoff()));
    expect(sent).toEqual([]);
    const again = await Shop.fromCheckpoint({ restoreFrom, provider }, { bus: new EventBus() });
    const result = await again.kickoff({ inputs: { apiKey: secret } });
    expect(result.output).toBe('charged');
    expect(sent).toEqual([secret]);
  });
});

const model = offlineModel({ name: 'redacted-state' });

/** Runs a crew in its second method with its key as a kickoff input its task is written with. */
class Caller extends Flow<{ apiKey: string }> {
  initialState = { apiKey: '' };
  @start() prepare() {
    return 'prepared';
  }
  @listen('prepare') async call() {
    const agent = new Agent({ role: 'Caller', goal: 'Call the service', backstory: 'Plain', llm: model });
    const task = new Task({
      description: 'Call the service with key {apiKey}',
      expectedOutput: 'text',
      agent,
    });
    const crew = new Crew({ agents: [agent], tasks: [task] });
    return (await crew.kickoff({ inputs: { apiKey: this.state.apiKey } })).raw;
  }
}

describe('a crew a restored flow runs with a key from its state', () => {
  it('is sent the key given again, never [REDACTED]', async () => {
    const provider = new InMemoryProvider();
    await new Caller({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff({ inputs: { apiKey: secret } });
    const afterPrepare = (await provider.list('mem'))[0]!;
    model.reset();
    const restoreFrom = `mem#${afterPrepare.id}`;
    const restored = await Caller.fromCheckpoint({ restoreFrom, provider }, { bus: new EventBus() });
    expectRefused(await rejection(restored.kickoff()));
    expect(model.calls).toEqual([]);
    const again = await Caller.fromCheckpoint({ restoreFrom, provider }, { bus: new EventBus() });
    await again.kickoff({ inputs: { apiKey: secret } });
    const sentToModel = JSON.stringify(model.calls.map((call) => call.messages));
    expect(sentToModel).toContain(secret);
    expect(sentToModel).not.toContain(REDACTED);
  });
});

describe('continueFromCheckpoint (the CLI, the terminal UI, the explorer) of such a state', () => {
  const registry = new ProjectRegistry().register({ flows: { Billing } });

  it('refuses a resume and a fork before the run starts; --input (inputs) gives the key', async () => {
    const { reference } = await pausedBilling(join(root, 'continue'));
    for (const mode of ['resume', 'fork'] as const) {
      const error = await rejection(
        continueFromCheckpoint({ reference, mode, humanInput: 'yes', registry, bus: new EventBus() }),
      );
      expectRefused(error);
    }
    expect(sent).toEqual([]);
    // What the CLI and the explorer ask before they say anything about the continuation.
    const { document } = await loadRestoreTarget(reference, { bus: new EventBus() });
    expectRefused(
      await rejection(Promise.resolve().then(() => checkContinuation(document, { mode: 'fork' }))),
    );
    expect(() => checkContinuation(document, { mode: 'fork', inputs: { apiKey: secret } })).not.toThrow();
    const resumed = await continueFromCheckpoint({
      reference,
      mode: 'resume',
      humanInput: 'yes',
      inputs: { apiKey: secret },
      registry,
      bus: new EventBus(),
    });
    expect(resumed.output).toBe('yes: charged ada');
    expect(sent).toEqual([secret]);
  });
});

describe('redactedStatePaths', () => {
  it('names fields holding the marker exactly, under any name, in records and arrays, never other text nor the state id', () => {
    const json = {
      id: REDACTED,
      mask: REDACTED,
      apiKey: REDACTED,
      note: `key ${REDACTED} refused`,
      database: { password: REDACTED, host: 'h' },
      tokens: ['a', REDACTED],
      credentials: { github: REDACTED },
    };
    expect(redactedStatePaths({ json })).toEqual([
      'mask',
      'apiKey',
      'database.password',
      'tokens[1]',
      'credentials.github',
    ]);
    // Given as inputs, the marker counts only under a credential name (the checkpoint's text sent
    // back); under another name it is the value its caller means.
    expect(redactedStatePaths({ json: { mask: REDACTED } }, { mask: REDACTED })).toEqual([]);
    expect(redactedStatePaths({ json: { apiKey: REDACTED } }, { apiKey: REDACTED })).toEqual(['apiKey']);
  });

  it('leaves out the top-level fields the inputs give, but not one given as the marker itself', () => {
    const json = { apiKey: REDACTED, database: { password: REDACTED } };
    expect(redactedStatePaths({ json }, { apiKey: 'k', database: { password: 'p' } })).toEqual([]);
    expect(redactedStatePaths({ json }, { apiKey: REDACTED, database: { password: 'p' } })).toEqual([
      'apiKey',
    ]);
    expect(redactedStatePaths({ json }, { database: { password: REDACTED } })).toEqual([
      'apiKey',
      'database.password',
    ]);
  });
});
