import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EventBus, LLMCallCompletedEvent } from '@crewline/events';
import { GrowingCrew } from '@crewline/provider-testkit/fixtures';
import { RuntimeState } from '@crewline/runtime-state';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** The database and every file beside it that shares its name (-wal, -shm, -journal). */
function databaseFiles(location: string): string[] {
  const directory = dirname(location);
  return readdirSync(directory)
    .filter((name) => name.startsWith(location.slice(directory.length + 1)))
    .map((name) => join(directory, name));
}

describe('secrets', () => {
  it('a planted API key never appears in the database, its WAL or its shared-memory file', async () => {
    const secret = `sk-proj-${'Q7x9Lm2Rt5Vb8Nc4Kd1Wf6Hg3Js0Pa'.repeat(2)}`;
    const provider = new SqliteProvider();
    const raw = temporaryDatabase();
    const location = provider.resolveLocation(raw);
    cleanups.push(() => {
      provider.close();
      removeTemporaryDatabase(raw);
    });
    const crew = new GrowingCrew(3);
    crew.tasks[0]!.output = `use the key ${secret} to call the API`;
    (crew.progress as Record<string, unknown>).apiKey = secret;
    const state = new RuntimeState({
      entities: [crew],
      inputs: { openaiApiKey: secret, prompt: `Authorization: Bearer ${secret}` },
      provider,
      location,
      bus: new EventBus(),
    });
    for (let index = 0; index < 20; index += 1) {
      state.recordEvent(
        new LLMCallCompletedEvent({
          model: 'offline:test',
          callId: `call-${index}`,
          response: `key=${secret} (${index})`,
        }),
      );
      state.writeCheckpointSync({ trigger: 'llm_call_completed' });
    }
    await provider.prune(location, { keep: 3 });
    await provider.collectGarbage(location);
    const files = databaseFiles(location);
    expect(files.map((file) => file.slice(location.length))).toEqual(
      expect.arrayContaining(['', '-wal', '-shm']),
    );
    const needles = [secret, secret.slice(-20)].map((needle) => Buffer.from(needle, 'utf8'));
    for (const file of files)
      for (const needle of needles) expect(readFileSync(file).includes(needle), file).toBe(false);
    // The redaction happened (the stored text says so), the key did not just go missing.
    const latest = await provider.latest(location);
    const raw_ = await provider.read(location, latest!.id);
    expect('text' in raw_ && raw_.text.includes('[REDACTED]')).toBe(true);
    provider.close();
    for (const file of databaseFiles(location))
      for (const needle of needles) expect(readFileSync(file).includes(needle)).toBe(false);
  });
});
