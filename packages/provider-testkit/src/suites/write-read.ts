import {
  type CheckpointDocument,
  decodeValue,
  isCheckpointProvider,
  PROVIDER_CONTRACT_VERSION,
  parseDocumentText,
  readDocument,
  validateDocument,
} from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { expectCrewlineError, expectListed, readBack } from '../assertions.js';
import {
  advanceTestRun,
  buildCheckpointWrite,
  createTestRun,
  sampleInputs,
  writeTestCheckpoint,
} from '../fixtures/test-run.js';
import type { Harness } from '../harness.js';

/** Compares decoded kickoff inputs with {@link sampleInputs}, including the own `__proto__` key. */
export function expectSampleInputs(document: CheckpointDocument): void {
  const decoded = decodeValue<Record<string, unknown>>(document.inputs);
  const { odd, ...rest } = decoded as { odd: Record<string, unknown> };
  const { odd: expectedOdd, ...expectedRest } = sampleInputs() as { odd: Record<string, unknown> };
  expect(rest).toEqual(expectedRest);
  expect(Object.keys(odd).sort()).toEqual(Object.keys(expectedOdd).sort());
  expect(Object.getOwnPropertyDescriptor(odd, '__proto__')?.value).toEqual({ polluted: 'yes' });
  expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
  expect(odd.constructor).toBe('c');
}

export function describeWriteAndRead(harness: Harness): void {
  describe('write and read', () => {
    it('declares kind, contract version and capabilities', async () => {
      const provider = await harness.provider();
      expect(isCheckpointProvider(provider)).toBe(true);
      expect(typeof provider.kind).toBe('string');
      expect(provider.kind.length).toBeGreaterThan(0);
      expect(provider.contractVersion).toBe(PROVIDER_CONTRACT_VERSION);
      for (const capability of ['syncWrite', 'incremental', 'leases'] as const) {
        expect(typeof provider.capabilities[capability]).toBe('boolean');
      }
      if (provider.capabilities.syncWrite) expect(typeof provider.writeSync).toBe('function');
    });

    it('resolveLocation is idempotent', async () => {
      const provider = await harness.provider();
      const location = provider.resolveLocation(await harness.location());
      expect(provider.resolveLocation(location)).toBe(location);
    });

    it('readParsed, where a provider has it, gives what read gives, across the writes of a run and a fork', async () => {
      const { provider, location } = await harness.setup();
      const { readParsed } = provider;
      if (readParsed === undefined) return;
      const maxBytes = 128 * 1024 * 1024;
      const run = createTestRun({ provider, location });
      const ids: string[] = [];
      for (let index = 0; index < 4; index += 1) {
        // A long output repeated in later events and a fork: event streams, references and shared chunks.
        advanceTestRun(run, index % 2 === 0 ? `${'long output '.repeat(40)}${index}` : undefined);
        if (index === 2) run.state.fork('readparsed/fork');
        ids.push((await writeTestCheckpoint(run, { sync: index === 1 })).id);
      }
      for (const id of ids) {
        const raw = await provider.read(location, id);
        const expected = 'text' in raw ? parseDocumentText(raw.text) : raw.document;
        const parsed = await readParsed.call(provider, location, id, { maxBytes });
        // Event lines handed over unparsed stand in for the document's events, one JSON event a line.
        if (parsed.eventLines !== undefined) expect(parsed.document).not.toHaveProperty('events');
        const document =
          parsed.eventLines === undefined
            ? parsed.document
            : {
                ...(parsed.document as object),
                events: parsed.eventLines.map((line) => JSON.parse(line) as unknown),
              };
        expect(document).toEqual(expected);
        expect(validateDocument(document)).toEqual(validateDocument(expected));
        expect(await readDocument(provider, location, id)).toEqual(validateDocument(expected));
      }
      await expectCrewlineError(
        () => readParsed.call(provider, location, 'no-such-checkpoint', { maxBytes }),
        ['not_found'],
      );
      await expectCrewlineError(
        () => readParsed.call(provider, location, ids[3]!, { maxBytes: 200 }),
        ['too_large'],
      );
    });

    it('write resolves to the stored metadata, and read gives back the exact document', async () => {
      const { provider, location } = await harness.setup();
      const write = buildCheckpointWrite();
      const stored = await provider.write(location, write);
      expectListed(stored, write.metadata);
      const document = await readBack(provider, location, write.metadata.id);
      expect(document).toEqual(write.document);
      expect(document.events.length).toBe(write.metadata.eventCount);
      expectSampleInputs(document);
    });

    it('writeSync stores synchronously and reads back exactly (when capabilities.syncWrite)', async (context) => {
      const { provider, location } = await harness.setup();
      if (!provider.capabilities.syncWrite || !provider.writeSync) {
        context.skip('the provider declares capabilities.syncWrite: false');
        return;
      }
      const write = buildCheckpointWrite();
      const stored = provider.writeSync(location, write);
      expect(stored).not.toBeInstanceOf(Promise);
      expectListed(stored, write.metadata);
      expect(await readBack(provider, location, write.metadata.id)).toEqual(write.document);
      expect((await provider.list(location)).map((entry) => entry.id)).toEqual([write.metadata.id]);
    });

    it('every checkpoint of a run reads back with its own metadata, inputs, entities and events', async () => {
      const { provider, location } = await harness.setup();
      const run = createTestRun({ provider, location });
      const expected: { id: string; entities: unknown; events: unknown[] }[] = [];
      for (let index = 0; index < 4; index += 1) {
        advanceTestRun(run);
        const entities = run.state.entities.map((entity) => entity.snapshotEntity());
        const events = structuredClone(run.state.events);
        const stored = await writeTestCheckpoint(run, { sync: index % 2 === 0 });
        expected.push({ id: stored.id, entities, events });
      }
      for (const { id, entities, events } of expected) {
        const read = await readBack(provider, location, id);
        expect(read.metadata.id).toBe(id);
        expect(read.metadata.eventCount).toBe(events.length);
        expect(read.entities).toEqual(entities);
        expect(read.events).toEqual(events);
        expectSampleInputs(read);
      }
    });

    it('writing the same checkpoint again (a retried write) stores it once', async () => {
      const { provider, location } = await harness.setup();
      const write = buildCheckpointWrite();
      await provider.write(location, write);
      try {
        await provider.write(location, write);
      } catch (error) {
        await expectCrewlineError(() => Promise.reject(error), ['conflict'], 'writing an id a second time');
      }
      expect((await provider.list(location)).map((entry) => entry.id)).toEqual([write.metadata.id]);
      expect(await readBack(provider, location, write.metadata.id)).toEqual(write.document);
    });

    it('read of an id that was never written rejects with not_found', async () => {
      const { provider, location } = await harness.setup();
      await expectCrewlineError(
        () => provider.read(location, '20200101T000000000-00000000'),
        ['not_found'],
        'read',
      );
      await provider.write(location, buildCheckpointWrite());
      await expectCrewlineError(
        () => provider.read(location, '20200101T000000000-00000000'),
        ['not_found'],
        'read',
      );
    });
  });
}
