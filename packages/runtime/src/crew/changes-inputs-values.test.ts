// changesInputs and givesRedactedAgain over the values a checkpoint saves (review RG on 066faba):
// an address whose password the checkpoint holds as [REDACTED] given again is no change but a
// credential given again (RG-2: a change, so the interrupted task started over and paid again);
// Sets, Maps and bigints are compared by what they hold (RG-7: a changed Set or Map was no change,
// a bigint threw and failed the kickoff).
import { REDACTED } from '@crewline/events';
import { decodeValue, encodeValue, readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { lookupTool, toolUsingModel } from '../e2e/support/fixtures.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { savedInputs } from '../restore/saved-inputs.js';
import { interruptedTasksOutcome } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';
import { changesInputs, givesRedactedAgain } from './interrupted-tasks.js';

const db = 'postgres://admin:Sup3rS3cretPassw0rd@db.internal/app';
const savedDb = `postgres://admin:${REDACTED}@db.internal/app`;

function roundTrip(value: Record<string, unknown>): Record<string, unknown> {
  return decodeValue<Record<string, unknown>>(encodeValue(value));
}

describe('an address saved with its password as [REDACTED]', () => {
  it('given again is no change, and a credential given again', () => {
    expect(changesInputs({ db: savedDb }, { db })).toBe(false);
    expect(givesRedactedAgain({ db: savedDb }, { db })).toBe(true);
    expect(changesInputs({ cfg: { db: savedDb } }, { cfg: { db } })).toBe(false);
    expect(givesRedactedAgain({ list: [savedDb] }, { list: [db] })).toBe(true);
  });

  it('given as saved is no change and nothing given again', () => {
    expect(changesInputs({ db: savedDb }, { db: savedDb })).toBe(false);
    expect(givesRedactedAgain({ db: savedDb }, { db: savedDb })).toBe(false);
  });

  it('given for another host, user or database, or with no password, is a change', () => {
    for (const other of [
      'postgres://admin:Sup3rS3cretPassw0rd@db.other/app',
      'postgres://root:Sup3rS3cretPassw0rd@db.internal/app',
      'postgres://admin:Sup3rS3cretPassw0rd@db.internal/app2',
      'postgres://admin:@db.internal/app',
    ]) {
      expect(changesInputs({ db: savedDb }, { db: other }), other).toBe(true);
      expect(givesRedactedAgain({ db: savedDb }, { db: other }), other).toBe(false);
    }
    // The text around the marker is matched as text, not as a pattern.
    expect(changesInputs({ db: 'a.b:[REDACTED]' }, { db: 'aXb:secret' })).toBe(true);
  });
});

describe('a Set or Map holding an address saved with its password as [REDACTED] (review RJ-2)', () => {
  it('given again is no change, and a credential given again', () => {
    // As the checkpoint holds them (the crew case below reads them from one).
    const saved = { pool: new Map([['primary', savedDb]]), hosts: new Set([savedDb, 'kelp']) };
    const given = { pool: new Map([['primary', db]]), hosts: new Set(['kelp', db]) };
    expect(changesInputs(saved, given)).toBe(false);
    expect(givesRedactedAgain(saved, { pool: given.pool })).toBe(true);
    expect(givesRedactedAgain(saved, { hosts: given.hosts })).toBe(true);
  });

  it('given for another host, or with a member more, is a change', () => {
    const saved = { pool: new Map([['primary', savedDb]]), hosts: new Set([savedDb]) };
    const other = 'postgres://admin:Sup3rS3cretPassw0rd@db.other/app';
    expect(changesInputs(saved, { pool: new Map([['primary', other]]) })).toBe(true);
    expect(changesInputs(saved, { pool: new Map([['replica', db]]) })).toBe(true);
    expect(changesInputs(saved, { hosts: new Set([other]) })).toBe(true);
    expect(changesInputs(saved, { hosts: new Set([db, other]) })).toBe(true);
    expect(givesRedactedAgain(saved, { hosts: new Set([other]) })).toBe(false);
  });

  it('pairs each saved member once', () => {
    const two = 'postgres://admin:An0therPassw0rd@db.internal/app';
    const saved = { hosts: new Set([savedDb, 'kelp']) };
    // Two addresses given where one was saved: one of them has no saved member to read as.
    expect(changesInputs(saved, { hosts: new Set([db, two]) })).toBe(true);
  });
});

describe('values JSON cannot write, as a checkpoint saves them', () => {
  it('a bigint given again is no change; another is one; neither throws', () => {
    const saved = roundTrip({ budget: 10n });
    expect(changesInputs(saved, { budget: 10n })).toBe(false);
    expect(changesInputs(saved, { budget: 11n })).toBe(true);
    expect(changesInputs(saved, { budget: '10' })).toBe(true);
  });

  it('a Set or Map is compared by its members, in any order', () => {
    const saved = roundTrip({ tags: new Set(['kelp', 'tides']), weights: new Map([['kelp', 1]]) });
    expect(changesInputs(saved, { tags: new Set(['tides', 'kelp']), weights: new Map([['kelp', 1]]) })).toBe(
      false,
    );
    expect(changesInputs(saved, { tags: new Set(['tides']) })).toBe(true);
    expect(changesInputs(saved, { weights: new Map([['tides', 9]]) })).toBe(true);
    expect(changesInputs(saved, { weights: new Map([['kelp', 2]]) })).toBe(true);
  });
});

function crew(model: OfflineModel, provider?: InMemoryProvider): Crew {
  const agent = new Agent({
    role: 'Researcher',
    goal: 'Research',
    backstory: 'Calm',
    llm: model,
    tools: [lookupTool],
  });
  return new Crew({
    agents: [agent],
    tasks: [new Task({ description: 'Research {topic}', expectedOutput: 'notes', agent })],
    ...(provider ? { checkpoint: { location: 'mem', provider, onEvents: ['*'] } } : {}),
  });
}

describe('a restored crew', () => {
  it('given its address again continues its interrupted task, paying nothing again, as planned', async () => {
    const provider = new InMemoryProvider();
    const model = toolUsingModel();
    await crew(model, provider).kickoff({ inputs: { db, topic: 'kelp' } });
    const first = (await provider.list('mem')).find((each) => each.trigger === 'llm_call_completed')!;
    const document = await readDocument(provider, 'mem', first.id);
    expect(savedInputs(document).db).toBe(savedDb);
    expect(interruptedTasksOutcome(document, { db })).toEqual({ action: 'continue' });
    model.reset();
    await crew(model).kickoff({
      inputs: { db },
      fromCheckpoint: { restoreFrom: `mem#${first.id}`, provider },
    });
    // The tool runs, then one call for the answer: the saved call is not made again.
    expect(model.calls).toHaveLength(1);
  });

  it('given a Set or Map holding its address again continues its interrupted task', async () => {
    for (const make of [() => new Map([['primary', db]]), () => new Set([db])]) {
      const provider = new InMemoryProvider();
      const model = toolUsingModel();
      await crew(model, provider).kickoff({ inputs: { pool: make(), topic: 'kelp' } });
      const first = (await provider.list('mem')).find((each) => each.trigger === 'llm_call_completed')!;
      model.reset();
      await crew(model).kickoff({
        inputs: { pool: make() },
        fromCheckpoint: { restoreFrom: `mem#${first.id}`, provider },
      });
      expect(model.calls, String(make())).toHaveLength(1);
    }
  });

  it('given a bigint input again continues (the kickoff threw)', async () => {
    const provider = new InMemoryProvider();
    const model = toolUsingModel();
    await crew(model, provider).kickoff({ inputs: { topic: 'kelp', budget: 10n } });
    const first = (await provider.list('mem')).find((each) => each.trigger === 'llm_call_completed')!;
    model.reset();
    await crew(model).kickoff({
      inputs: { budget: 10n },
      fromCheckpoint: { restoreFrom: `mem#${first.id}`, provider },
    });
    expect(model.calls).toHaveLength(1);
  });
});
