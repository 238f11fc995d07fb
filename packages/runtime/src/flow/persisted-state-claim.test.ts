// Two processes and one `@persist()` state id (found by a data-safety attack with real processes).
// A persisted flow without a checkpoint config claimed no lineage head: a second process kicking off
// the state id while the first ran restored its latest save and ran the remaining methods again, in
// parallel (paid twice). And two processes kicking off the same new state id at once each started a
// lineage of their own and both ran everything. The first kickoff of a state now claims the head of
// the state's lineage in the store it saves to, and that lineage is the same in every process.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exited, type StartedChild, startChild, tsxChildScript } from '../e2e/support/child-process.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { stateLineageId } from './flow-storage.js';

const script = tsxChildScript(
  fileURLToPath(new URL('./test-support/persisted-state-child.ts', import.meta.url)),
);

interface ChildOptions {
  config?: boolean;
  barrier?: string;
  gate?: { method: string; file: string };
  nested?: boolean;
}

interface Outcome {
  executions: string[];
  result?: { status: string; steps: string[] };
  error?: { code: string; message: string };
  /** The lineages whose lease the child's store gave up (the `nested` option). */
  released: string[];
}

let directory: { path: string; cleanup: () => void };
beforeAll(() => {
  directory = temporaryDirectory('crewline-persisted-claim-');
});
afterAll(() => directory.cleanup());

let counter = 0;
function scratch(name: string): string {
  counter += 1;
  return join(directory.path, `${counter}-${name}`);
}

/** Children of the running test: one a failed test left waiting at its gate is ended after it. */
const started: StartedChild[] = [];
afterEach(() => {
  for (const { child } of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function start(location: string, stateId: string, options: ChildOptions = {}): StartedChild {
  const child = startChild(script, [location, stateId, JSON.stringify(options)]);
  started.push(child);
  return child;
}

/** What a child did, once it ended (it must end on its own, with code 0). */
async function outcome(started: StartedChild): Promise<Outcome> {
  const { code, signal } = await exited(started.child);
  expect({ code, signal }, started.stderr()).toEqual({ code: 0, signal: null });
  return parse(started);
}

function parse(started: StartedChild): Outcome {
  const messages = started.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
  return {
    executions: messages.flatMap((message) => (typeof message.exec === 'string' ? [message.exec] : [])),
    result: messages.find((message) => message.result)?.result,
    error: messages.find((message) => message.error)?.error,
    released: messages.flatMap((message) => (typeof message.released === 'string' ? [message.released] : [])),
  };
}

/** Resolves once `ready` holds for what the children printed so far (checked as each line comes). */
function whenPrinted(children: StartedChild[], ready: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the children never printed what was waited for')),
      30_000,
    );
    const check = () => {
      if (!ready()) return;
      clearTimeout(timer);
      for (const child of children) child.child.stdout!.off('data', later);
      resolve();
    };
    // After the child's own line handler, which comes first: the line is in `lines` when checked.
    const later = () => setImmediate(check);
    for (const child of children) child.child.stdout!.on('data', later);
    check();
  });
}

async function checkpointCount(location: string): Promise<number> {
  const provider = location.endsWith('.db') ? new SqliteProvider() : new JsonProvider();
  try {
    return (await provider.list(location)).length;
  } finally {
    await provider.close?.();
  }
}

const stores = [
  { name: 'SQLite', location: (name: string) => `${scratch(name)}.db` },
  { name: 'JSON', location: (name: string) => scratch(name) },
];

describe.each(stores)(
  'a @persist() state kicked off by two processes ($name)',
  { timeout: 90_000 },
  (store) => {
    it('refuses the second while the first runs the state, and nothing is paid twice', async () => {
      const location = store.location('live');
      const gate = `${location}.release`;
      const holder = start(location, 'invoice-7', { gate: { method: 'second', file: gate } });
      // The first method's save is stored before the second method starts.
      await holder.waitFor(/"exec":"second"/);
      const second = await outcome(start(location, 'invoice-7'));
      writeFileSync(gate, '');
      const first = await outcome(holder);

      expect(second.executions).toEqual([]);
      expect(second.error?.code, JSON.stringify(second)).toBe('conflict');
      expect(second.error?.message).toContain('invoice-7');
      expect(first.result).toEqual({
        status: 'completed',
        output: 4,
        steps: ['first', 'second', 'third', 'fourth'],
      });
      expect(first.executions).toEqual(['first', 'second', 'third', 'fourth']);
    });

    it('lets a second process take over at once from a holder killed with SIGKILL', async () => {
      const location = store.location('killed');
      const holder = start(location, 'invoice-8', {
        gate: { method: 'second', file: `${location}.never` },
      });
      await holder.waitFor(/"exec":"second"/);
      holder.child.kill('SIGKILL');
      await exited(holder.child);
      const next = await outcome(start(location, 'invoice-8'));
      // The holder's process is gone (same machine): its claim is taken over without waiting for it.
      expect(next.error).toBeUndefined();
      expect(next.executions).toEqual(['second', 'third', 'fourth']);
      expect(next.result?.steps).toEqual(['first', 'second', 'third', 'fourth']);
    });

    it.each([
      { setting: 'with @persist() alone', config: false },
      { setting: 'with a checkpoint config too', config: true },
    ])('runs a new state id kicked off at the same moment once ($setting)', async ({ config }) => {
      const location = store.location('race');
      const barrier = `${location}.go`;
      const gate = `${location}.release`;
      const children = [0, 1].map(() =>
        start(location, 'order-1', { config, barrier, gate: { method: 'first', file: gate } }),
      );
      await Promise.all(children.map((child) => child.waitFor(/"ready":true/)));
      writeFileSync(barrier, '');
      // Either both started the state (the defect), or one holds it and the other was refused.
      await whenPrinted(children, () => {
        const outcomes = children.map(parse);
        const running = outcomes.filter((each) => each.executions.includes('first')).length;
        return running === 2 || (running === 1 && outcomes.some((each) => each.error !== undefined));
      });
      writeFileSync(gate, '');
      const [one, other] = await Promise.all(children.map(outcome));

      const executions = [...one!.executions, ...other!.executions].sort();
      expect(executions).toEqual(['first', 'fourth', 'second', 'third']);
      const refused = [one, other].find((each) => each!.error !== undefined);
      expect(refused?.error?.code, JSON.stringify([one, other])).toBe('conflict');
      expect(refused?.error?.message).toContain('order-1');
      expect([one, other].filter((each) => each!.result?.status === 'completed')).toHaveLength(1);
      // One lineage: its saves, one per method (twice with the config: its own and the run's), no more.
      expect(await checkpointCount(location)).toBe(4);
    });
  },
);

// Kicked off inside another flow's method, the state joins that flow's run, which claimed nothing of
// it: two processes ran its methods side by side (and paid twice). The kickoff now claims the head of
// the state's lineage itself while it runs.
describe.each(stores)(
  'a @persist() state kicked off inside another flow by two processes ($name)',
  { timeout: 90_000 },
  (store) => {
    const nested = { nested: true };

    it('refuses the second while the first runs the state, and nothing is paid twice', async () => {
      const location = store.location('nested-live');
      const gate = `${location}.release`;
      const holder = start(location, 'invoice-9', { ...nested, gate: { method: 'second', file: gate } });
      await holder.waitFor(/"exec":"second"/);
      const second = await outcome(start(location, 'invoice-9', nested));
      writeFileSync(gate, '');
      const first = await outcome(holder);

      expect(second.executions).toEqual([]);
      expect(second.error?.code, JSON.stringify(second)).toBe('conflict');
      expect(second.error?.message).toContain('state "invoice-9" is being run by flow Ledger in flow Desk');
      expect(first.executions).toEqual(['first', 'second', 'third', 'fourth']);
      expect(first.result).toEqual({
        status: 'completed',
        output: 4,
        steps: ['first', 'second', 'third', 'fourth'],
      });
      // Given up as the kickoff ended.
      expect(first.released).toEqual([stateLineageId('Ledger', 'invoice-9')]);
    });

    it('runs a state kicked off at the same moment in two processes once', async () => {
      const location = store.location('nested-race');
      const barrier = `${location}.go`;
      const gate = `${location}.release`;
      const children = [0, 1].map(() =>
        start(location, 'order-2', { ...nested, barrier, gate: { method: 'first', file: gate } }),
      );
      await Promise.all(children.map((child) => child.waitFor(/"ready":true/)));
      writeFileSync(barrier, '');
      await whenPrinted(children, () => {
        const outcomes = children.map(parse);
        const running = outcomes.filter((each) => each.executions.includes('first')).length;
        return running === 2 || (running === 1 && outcomes.some((each) => each.error !== undefined));
      });
      writeFileSync(gate, '');
      const [one, other] = await Promise.all(children.map(outcome));

      expect([...one!.executions, ...other!.executions].sort()).toEqual([
        'first',
        'fourth',
        'second',
        'third',
      ]);
      const refused = [one, other].find((each) => each!.error !== undefined);
      expect(refused?.error?.code, JSON.stringify([one, other])).toBe('conflict');
      expect(refused?.error?.message).toContain('order-2');
    });

    it('lets a second process take over at once from a holder killed with SIGKILL', async () => {
      const location = store.location('nested-killed');
      const holder = start(location, 'invoice-10', {
        ...nested,
        gate: { method: 'second', file: `${location}.never` },
      });
      await holder.waitFor(/"exec":"second"/);
      holder.child.kill('SIGKILL');
      await exited(holder.child);
      const next = await outcome(start(location, 'invoice-10', nested));
      expect(next.error).toBeUndefined();
      // A nested kickoff runs the state from its start (its parent's run continues what it saved).
      expect(next.result?.steps).toEqual(['first', 'second', 'third', 'fourth']);
    });

    it('gives the state up before Ctrl+C ends the holder', async () => {
      const location = store.location('nested-interrupted');
      const holder = start(location, 'invoice-11', {
        ...nested,
        gate: { method: 'second', file: `${location}.never` },
      });
      await holder.waitFor(/"exec":"second"/);
      holder.child.kill('SIGINT');
      const { signal } = await exited(holder.child);
      expect(signal, holder.stderr()).toBe('SIGINT');
      expect(parse(holder).released).toEqual([stateLineageId('Ledger', 'invoice-11')]);
      const next = await outcome(start(location, 'invoice-11', nested));
      expect(next.error).toBeUndefined();
    });
  },
);
