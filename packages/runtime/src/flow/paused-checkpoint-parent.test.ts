import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import {
  type CheckpointDocument,
  createCheckpointWrite,
  type ProviderRegistry,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { providerRegistry } from '../checkpointing/provider-registry.js';
import { Flow, listen, persist, start } from './index.js';

// Trial (new user, SQLite): the `flow_paused` checkpoint of a flow that asked a question named no
// parent, though it was the fifth checkpoint of its run; with JSON it named the one before it. The
// pause is written by the flow itself (not by the automatic checkpoints), and it used the config's
// provider as resolved before the kickoff: for a `.db` or `postgres://` location a stand-in of the
// provider still being imported, not the provider the run's own writes went through. The run keeps
// its chain of parents per provider object, so the stand-in's chain started from nothing.

const root = mkdtempSync(join(tmpdir(), 'crewline-paused-parent-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const registries: ProviderRegistry[] = [];
afterEach(async () => {
  for (const registry of registries.splice(0)) await registry.close();
});

/**
 * A registry of its own for each run: nothing imported SQLite or Postgres in it yet, as in a new
 * process, so the config's provider is the stand-in the trial's run had.
 */
function freshRegistry(): ProviderRegistry {
  const registry = providerRegistry();
  registries.push(registry);
  return registry;
}

class Review extends Flow<{ draft: string; verdict: string }> {
  initialState = { draft: '', verdict: '' };

  @start() write() {
    this.state.draft = 'a short essay';
    return this.state.draft;
  }

  @listen('write') async approve() {
    const answer = await this.ask('Publish it?');
    this.state.verdict = answer;
    return answer;
  }

  @listen('approve') publish(answer: string) {
    return answer === 'yes' ? `published ${this.state.draft}` : 'discarded';
  }
}

/** The checkpoints of one run, oldest first: each after the first names the one before it. */
function expectOneChain(checkpoints: readonly StoredCheckpoint[]): void {
  expect(checkpoints.length).toBeGreaterThan(1);
  expect(new Set(checkpoints.map((checkpoint) => checkpoint.lineageId)).size).toBe(1);
  expect(checkpoints[0]?.parentId).toBeNull();
  for (let index = 1; index < checkpoints.length; index += 1) {
    expect({ trigger: checkpoints[index]?.trigger, parentId: checkpoints[index]?.parentId }).toEqual({
      trigger: checkpoints[index]?.trigger,
      parentId: checkpoints[index - 1]?.id,
    });
  }
}

const postgresUrl = process.env.CREWLINE_TEST_POSTGRES_URL;

const stores: { kind: string; location: () => string; skip?: boolean }[] = [
  { kind: 'json', location: () => join(mkdtempSync(join(root, 'json-')), 'checkpoints') },
  { kind: 'sqlite', location: () => join(mkdtempSync(join(root, 'sqlite-')), 'checkpoints.db') },
  {
    kind: 'postgres',
    // Run with CREWLINE_TEST_POSTGRES_URL set (a server the tests may create schemas in).
    location: () =>
      `${postgresUrl}${postgresUrl?.includes('?') ? '&' : '?'}schema=paused_parent_${Date.now().toString(36)}${Math.floor(Math.random() * 1e6)}`,
    skip: postgresUrl === undefined,
  },
];

describe.each(stores)(
  'the pause checkpoint of a flow in $kind names its parent',
  ({ kind, location: make, skip }) => {
    it.skipIf(skip === true)(
      'with a checkpoint config, through the answer and the end of the run',
      async () => {
        const location = make();
        const onEvents = ['method_execution_finished'] as const;
        const flow = new Review({
          bus: new EventBus(),
          checkpoint: { location, onEvents: [...onEvents], providers: freshRegistry() },
        });
        const paused = await flow.kickoff();
        expect(paused.status).toBe('paused');

        const reader = await freshRegistry().open(location);
        expect(reader.provider.kind).toBe(kind);
        const before = await reader.provider.list(reader.provider.resolveLocation(location));
        expect(before.map((checkpoint) => checkpoint.trigger)).toEqual([
          'method_execution_finished',
          'flow_paused',
        ]);
        expect(before[1]?.reference).toBe(paused.pause?.resumeFrom);
        expectOneChain(before);

        // The answer, in a "new process" again: its writes, the last one included, go on from the pause.
        const done = await Review.resume(paused.pause?.resumeFrom as string, 'yes', {
          bus: new EventBus(),
          checkpoint: { location, onEvents: [...onEvents], providers: freshRegistry() },
        });
        expect(done.status).toBe('completed');
        expect(done.output).toBe('published a short essay');
        const after = await reader.provider.list(reader.provider.resolveLocation(location));
        expect(after.map((checkpoint) => checkpoint.trigger)).toEqual([
          'method_execution_finished',
          'flow_paused',
          'human_feedback_received',
          'method_execution_finished',
          'method_execution_finished',
        ]);
        expectOneChain(after);
      },
    );

    it.skipIf(skip === true)('with @persist() and a checkpoint config', async () => {
      const location = make();
      @persist()
      class PersistedReview extends Review {}
      const paused = await new PersistedReview({
        bus: new EventBus(),
        // No automatic checkpoint (no task runs): every write is the flow's own, its @persist() save and the pause.
        checkpoint: { location, onEvents: ['task_completed'], providers: freshRegistry() },
      }).kickoff();
      expect(paused.status).toBe('paused');
      const reader = await freshRegistry().open(location);
      const stored = await reader.provider.list(reader.provider.resolveLocation(location));
      expect(stored.map((checkpoint) => checkpoint.trigger)).toEqual([
        'method_execution_finished',
        'flow_paused',
      ]);
      expectOneChain(stored);
    });
  },
);

describe('a pause checkpoint stored without its parent (before the fix)', () => {
  it('still takes its answer, and what follows names it as parent', async () => {
    const location = join(mkdtempSync(join(root, 'legacy-')), 'checkpoints.db');
    const onEvents = ['method_execution_finished' as const];
    const paused = await new Review({
      bus: new EventBus(),
      checkpoint: { location, onEvents, providers: freshRegistry() },
    }).kickoff();
    const { provider } = await freshRegistry().open(location);
    const resolved = provider.resolveLocation(location);
    const [first, pause] = await provider.list(resolved);
    // Stored again as the trial's SQLite run stored it: the same checkpoint, naming no parent.
    const raw = await provider.read(resolved, pause!.id);
    const document = ('document' in raw ? raw.document : JSON.parse(raw.text)) as CheckpointDocument;
    expect(await provider.delete(resolved, pause!.id)).toBe(true);
    await provider.write(
      resolved,
      createCheckpointWrite({
        ...document,
        metadata: { ...document.metadata, parentId: null },
        parentEventCount: 0,
        libraryVersion: document.libraryVersion,
      }),
    );
    const legacy = await provider.list(resolved);
    expect(legacy.map((checkpoint) => [checkpoint.id, checkpoint.parentId])).toEqual([
      [first!.id, null],
      [pause!.id, null],
    ]);

    const done = await Review.resume(paused.pause?.resumeFrom as string, 'yes', {
      bus: new EventBus(),
      checkpoint: { location, onEvents, providers: freshRegistry() },
    });
    expect(done.status).toBe('completed');
    expect(done.output).toBe('published a short essay');
    const after = await provider.list(resolved);
    expect(after.map((checkpoint) => checkpoint.trigger)).toEqual([
      'method_execution_finished',
      'flow_paused',
      'human_feedback_received',
      'method_execution_finished',
      'method_execution_finished',
    ]);
    expectOneChain(after.slice(1));
    expect(after[2]?.parentId).toBe(pause!.id);
  });
});

describe('the pause checkpoint of a flow kicked off inside another run', () => {
  it('names its parent when its setting was resolved before SQLite was imported', async () => {
    const location = join(mkdtempSync(join(root, 'nested-')), 'checkpoints.db');
    const providers = freshRegistry();
    // What the inner flow's setting is resolved to when its kickoff comes before the import ended:
    // the stand-in. The outer run's own config is the real provider (its kickoff waits for it).
    const standIn = providers.provider('sqlite');
    let inner: Awaited<ReturnType<Review['kickoff']>> | undefined;
    class Outer extends Flow<{ done: boolean }> {
      initialState = { done: false };
      @start() async review() {
        inner = await new Review({
          checkpoint: { location, provider: standIn, onEvents: ['method_execution_finished'] },
        }).kickoff();
        return inner.status;
      }
    }
    await new Outer({
      bus: new EventBus(),
      checkpoint: { location, onEvents: ['method_execution_finished'], providers },
    }).kickoff();
    expect(inner?.status).toBe('paused');
    const reader = await freshRegistry().open(location);
    const stored = await reader.provider.list(reader.provider.resolveLocation(location));
    expect(stored.map((checkpoint) => checkpoint.trigger)).toEqual([
      'method_execution_finished',
      'flow_paused',
      'method_execution_finished',
    ]);
    expectOneChain(stored);
  });
});
