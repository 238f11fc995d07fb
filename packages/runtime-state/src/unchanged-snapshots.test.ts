import { EventBus, registerSecretValue } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { EntitySnapshot } from './document.js';
import type { JsonObject } from './json.js';
import { redactSecrets } from './redaction.js';
import type { CheckpointableEntity } from './run-entities.js';
import { RuntimeState } from './runtime-state.js';
import { SettledValues } from './settled-values.js';
import { sameContent, UnchangedSnapshots } from './unchanged-snapshots.js';

/** SettledValues that counts the lookups redaction makes. */
class CountingMarks extends SettledValues {
  lookups = 0;
  override scannedUnder(value: object): number | undefined {
    this.lookups += 1;
    return super.scannedUnder(value);
  }
}

function crewSnapshot(
  settled: SettledValues,
  tasks: readonly Record<string, string | number>[],
  status = 'completed',
): EntitySnapshot {
  return {
    kind: 'crew',
    id: 'crew-1',
    name: 'research',
    data: {
      status,
      process: 'sequential',
      checkpoint: { onEvents: ['*'] },
      tasks: tasks.map((task) => settled.settle(task)),
    },
  };
}

describe('unchanged snapshots', () => {
  it('gives the last redacted snapshot again while the content is the same, without walking it', () => {
    const settled = new CountingMarks();
    const snapshots = new UnchangedSnapshots();
    const entity = {};
    const tasks = Array.from({ length: 50 }, (_, index) => ({ index, output: `output ${index}` }));
    const first = snapshots.redacted(entity, crewSnapshot(settled, tasks), settled);
    const second = snapshots.redacted(entity, crewSnapshot(settled, tasks), settled);
    expect(second).toBe(first);
    settled.lookups = 0;
    expect(snapshots.redacted(entity, crewSnapshot(settled, tasks), settled)).toBe(first);
    // The settle calls of the snapshot itself look each task up once; redaction adds nothing.
    expect(settled.lookups).toBeLessThanOrEqual(2 * tasks.length + 2);
  });

  it('finds an item of a long list changed in place among settled ones the list held before', () => {
    const settled = new SettledValues();
    const snapshots = new UnchangedSnapshots();
    const entity = {};
    const done = Array.from({ length: 20 }, (_, index) =>
      settled.settle({ index, output: `output ${index}` }),
    );
    // A credential-named field makes redaction store a copy: a stale snapshot would still say "draft".
    const live = { index: 20, output: 'draft', password: 'not-to-be-stored' };
    const snapshot = (): EntitySnapshot => ({
      kind: 'crew',
      id: 'crew-1',
      name: 'research',
      data: { tasks: [...done.slice(0, 10), live, ...done.slice(10)] },
    });
    // Twice: the second compares, and redaction remembers the list's settled items by position.
    snapshots.redacted(entity, snapshot(), settled);
    snapshots.redacted(entity, snapshot(), settled);
    live.output = 'final';
    const after = snapshots.redacted(entity, snapshot(), settled);
    expect((after.data as { tasks: { output: string }[] }).tasks[10]).toEqual({
      index: 20,
      output: 'final',
      password: '[REDACTED]',
    });
  });

  it('redacts a snapshot whose content changed, and one taken after a secret was registered', () => {
    const settled = new SettledValues();
    const snapshots = new UnchangedSnapshots();
    const entity = {};
    const secret = `unchanged-secret-${Math.random().toString(36).slice(2)}`;
    const tasks = [{ index: 0, output: `holds ${secret}` }];
    const first = snapshots.redacted(entity, crewSnapshot(settled, tasks, 'running'), settled);
    const changed = snapshots.redacted(entity, crewSnapshot(settled, tasks, 'completed'), settled);
    expect(changed).not.toBe(first);
    expect((changed.data as { status: string }).status).toBe('completed');
    registerSecretValue(secret);
    const after = snapshots.redacted(entity, crewSnapshot(settled, tasks, 'completed'), settled);
    expect(after).not.toBe(changed);
    expect(JSON.stringify(after)).not.toContain(secret);
  });

  it('gives what redaction gives, snapshot after snapshot of a crew at work', () => {
    const settled = new SettledValues();
    const snapshots = new UnchangedSnapshots();
    const entity = {};
    const key = 'sk-ant-' + 'a1b2c3d4e5f6g7h8i9j0'.repeat(2);
    const done: JsonObject[] = [];
    const messages: JsonObject[] = [];
    const snapshot = (step: number): EntitySnapshot => ({
      kind: 'crew',
      id: 'crew-1',
      name: 'research',
      data: {
        status: step < 40 ? 'running' : 'completed',
        settings: { apiKey: `hunter-${step}`, model: 'offline', nested: { token: ['a', `b${step % 2}`] } },
        notes: [`Always ${key}`, `step ${step % 4}`],
        ['__proto__']: { polluted: true },
        tasks: [
          ...done,
          {
            index: done.length,
            description: `Research with ${key}`,
            prompt: 'Always the same prompt',
            conversation: { messages: [...messages], calls: messages.length },
            headers: { authorization: step % 2 === 0 ? 'Bearer abcdefghijklmnopqrstuvwxyz' : '' },
          },
          ...Array.from({ length: 20 - done.length }, (_, index) => settled.settle({ pending: index })),
        ],
      },
    });
    for (let step = 0; step < 45; step += 1) {
      if (step % 5 === 4 && done.length < 20)
        done.push(settled.settle({ index: done.length, output: `done, key ${key}` }));
      if (step % 3 === 0)
        messages.push(settled.settle({ role: 'assistant', content: `step ${step} ${key}` }));
      const raw = snapshot(step);
      const redacted = snapshots.redacted(entity, raw, settled);
      expect(redacted, `step ${step}`).toEqual(redactSecrets(raw));
      expect(JSON.stringify(redacted)).not.toContain(key);
      expect(JSON.stringify(redacted)).not.toContain('hunter');
      // The same snapshot again is recognized as unchanged: the very same redacted object.
      if (step % 7 === 0) expect(snapshots.redacted(entity, snapshot(step), settled)).toBe(redacted);
    }
  });

  it('counts an object it did not settle, found in both snapshots, as changed: it may have changed in place', () => {
    const settled = new SettledValues();
    const live = { note: 'nothing yet' };
    expect(sameContent({ live }, { live }, settled)).toBe(false);
    expect(sameContent({ live: { ...live } }, { live: { ...live } }, settled)).toBe(true);
    const kept = settled.settle({ note: 'final' });
    expect(sameContent({ kept }, { kept }, settled)).toBe(true);
    expect(sameContent({ a: 1, b: 2 }, { b: 2, a: 1 }, settled)).toBe(false);
    expect(sameContent([1, 2], [1, 2, 3], settled)).toBe(false);
    expect(sameContent({ at: new Date(0) }, { at: new Date(1) }, settled)).toBe(false);
  });
});

/** SettledValues that counts the settled checks a comparison makes. */
class CountingChecks extends SettledValues {
  checks = 0;
  override has(value: object): boolean {
    this.checks += 1;
    return super.has(value);
  }
}

describe('settling a snapshot found unchanged', () => {
  it("recognizes its long list's settled items by position instead of looking each up", () => {
    const settled = new CountingMarks();
    const snapshots = new UnchangedSnapshots();
    const entity = {};
    const tasks = Array.from({ length: 50 }, (_, index) => ({ index, output: `output ${index}` }));
    const running = () => ({ index: 50, conversation: ['one'] });
    const snapshot = (): EntitySnapshot => {
      const base = crewSnapshot(settled, tasks, 'running');
      (base.data as { tasks: unknown[] }).tasks.push(running());
      return base;
    };
    snapshots.redacted(entity, snapshot(), settled);
    settled.lookups = 0;
    const unchanged = snapshots.redacted(entity, snapshot(), settled);
    expect(settled.has(unchanged)).toBe(true);
    // Comparing and settling look up the few objects outside the list, not its fifty tasks (65 did).
    expect(settled.lookups).toBeLessThan(tasks.length);
  });
});

describe('comparing a list that changed in one member', () => {
  it('finds the change without checking every unchanged member before it, so the cost does not grow with the run', () => {
    const settled = new CountingChecks();
    const done = Array.from({ length: 400 }, (_, index) =>
      settled.settle({ index, output: `output ${index}` }),
    );
    const previous = [...done, { index: 400, conversation: ['one'] }];
    const next = [...done, { index: 400, conversation: ['one', 'two'] }];
    settled.checks = 0;
    expect(sameContent(previous, next, settled)).toBe(false);
    expect(settled.checks).toBeLessThanOrEqual(2);
    // Equal lists still have each shared member checked: an unsettled one may have changed in place.
    const same = [...done, settled.settle({ index: 400 })];
    expect(sameContent(same, [...same], settled)).toBe(true);
    const live = { index: 401 };
    expect(sameContent([...done, live], [...done, live], settled)).toBe(false);
  });
});

describe('RuntimeState.snapshot', () => {
  it("gives an entity's unchanged snapshot again, the same object, so that nothing walks or stores it twice", () => {
    let status = 'running';
    const entity: CheckpointableEntity = {
      entityKind: 'crew',
      entityId: 'crew-1',
      entityName: 'research',
      snapshotEntity: (settled) => ({
        kind: 'crew',
        id: 'crew-1',
        name: 'research',
        data: { status, tasks: [settled!.settle({ output: 'a settled output' })] },
      }),
      summarizeEntity: () => ({ kind: 'crew', id: 'crew-1', name: 'research' }),
    };
    const state = new RuntimeState({ entities: [entity], bus: new EventBus() });
    const first = state.snapshot().entities[0];
    expect(state.snapshot().entities[0]).toBe(first);
    status = 'completed';
    const changed = state.snapshot().entities[0];
    expect(changed).not.toBe(first);
    expect(changed).toEqual({ ...first, data: { ...(first!.data as object), status: 'completed' } });
  });
});
