import { CrewlineError } from '@crewline/events';
import { growingRun } from '@crewline/provider-testkit/fixtures';
import { afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from './database/schema.js';
import { parseSqliteProviderOptions } from './options.js';
import { SqliteProvider } from './sqlite-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function expectInvalid(options: unknown, message: RegExp) {
  try {
    parseSqliteProviderOptions(options);
  } catch (error) {
    expect(CrewlineError.hasCode(error, 'invalid_config')).toBe(true);
    expect((error as Error).message).toMatch(message);
    return;
  }
  expect.fail('the options were accepted');
}

describe('SqliteProvider options', () => {
  it('has documented defaults', () => {
    expect(parseSqliteProviderOptions()).toEqual({
      synchronous: 'normal',
      busyTimeoutMs: 5000,
      busyRetryMs: 60_000,
      maxCheckpointBytes: 128 * 1024 * 1024,
      groupCommit: false,
    });
    expect(new SqliteProvider().capabilities.backgroundWrites).toBe(false);
    expect(new SqliteProvider({ groupCommit: true }).capabilities.backgroundWrites).toBe(true);
  });

  it('refuses unknown options by name and bad values by path', () => {
    expectInvalid({ timeout: 5 }, /unknown option "timeout"/);
    expectInvalid({ synchronous: 'off' }, /synchronous/);
    expectInvalid({ busyTimeoutMs: -1 }, /busyTimeoutMs/);
    expectInvalid({ busyTimeoutMs: 1.5 }, /busyTimeoutMs/);
    expectInvalid({ maxCheckpointBytes: 0 }, /maxCheckpointBytes/);
    expectInvalid({ groupCommit: 'yes' }, /groupCommit/);
    expect(() => new SqliteProvider({ synchronous: 'extra' as 'full' })).toThrow(/synchronous/);
  });

  for (const synchronous of ['normal', 'full'] as const) {
    it(`sets synchronous=${synchronous} on its connection, and it holds after writes`, async () => {
      const provider = new SqliteProvider({ synchronous });
      const raw = temporaryDatabase();
      const location = provider.resolveLocation(raw);
      cleanups.push(() => {
        provider.close();
        removeTemporaryDatabase(raw);
      });
      const run = growingRun({ provider, location, tasks: 2 });
      for (let index = 0; index < 3; index += 1) run.state.writeCheckpointSync({ trigger: run.step() });
      const stats = (await provider.stats(location))!;
      expect(stats.synchronous).toBe(synchronous);
      expect(stats.journalMode).toBe('wal');
      expect(stats.schemaVersion).toBe(SCHEMA_VERSION);
    });
  }
});
