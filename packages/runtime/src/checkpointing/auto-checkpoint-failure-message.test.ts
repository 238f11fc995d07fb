// The warning of an automatic checkpoint that failed says what happens next: on a model or tool event
// the run goes on without it; on a signal (Ctrl+C, a SIGTERM from a supervisor, a closed terminal)
// the process is ending, and saying that the run continues would tell the user the opposite.
import { type BaseEvent, type EventBus, type LogRecord, setLogSink } from '@crewline/events';
import type { CheckpointConfig } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AutoCheckpointRun, installAutoCheckpoint } from './auto-checkpoint.js';

let records: LogRecord[];

beforeEach(() => {
  records = [];
  setLogSink((record) => records.push(record));
});

afterEach(() => {
  setLogSink(null);
});

/** The warning logged when the automatic checkpoint of an event of type `trigger` fails. */
async function warningOnFailure(trigger: string): Promise<string> {
  let listener: ((source: unknown, event: BaseEvent, state: unknown) => void) | undefined;
  const bus = {
    onAny(registered: typeof listener) {
      listener = registered;
    },
  } as unknown as EventBus;
  const config = { location: 'postgres://db/checkpoints', onEvents: ['*'] } as unknown as CheckpointConfig;
  const run: AutoCheckpointRun = {
    state: {
      writeCheckpoint: () => Promise.reject(new Error('the connection to the server was lost')),
      writeCheckpointSync: () => {
        throw new Error('not written synchronously here');
      },
      settle: () => Promise.resolve(),
    } as unknown as AutoCheckpointRun['state'],
    configForEvent: () => config,
  };
  installAutoCheckpoint(bus, () => run);
  listener!({}, { type: trigger } as BaseEvent, {});
  await new Promise((resolve) => setImmediate(resolve));
  expect(records).toHaveLength(1);
  return records[0]!.message;
}

describe('the warning of a failed automatic checkpoint', () => {
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'])('on %s says the process ends without it', async (signal) => {
    const message = await warningOnFailure(signal);
    expect(message).toContain(`automatic checkpoint on ${signal} to postgres://db/checkpoints failed`);
    expect(message).not.toContain('the run continues');
    expect(message).toContain('the process ends without it');
  });

  it('on any other event says the run continues without it', async () => {
    const message = await warningOnFailure('llm_call_completed');
    expect(message).toContain('failed; the run continues without it');
  });
});
