// A signal's checkpoint is written after what was queued before it (background writes keep their
// order). When the store fails, the earlier events' checkpoints fail too, and their warnings come
// after the signal, while the process is ending: "the run continues without it" then told the user
// the opposite of what happens next.
import { join } from 'node:path';
import {
  type CheckpointEventType,
  EventBus,
  type LogRecord,
  MemorySaveStartedEvent,
  SigIntEvent,
  setLogSink,
  TaskStartedEvent,
} from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { type CheckpointWrite, parseCheckpointConfig, type StoredCheckpoint } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { Run } from './run.js';
import { emptyFlowEntity } from './test-support/empty-flow-entity.js';

/** The JSON provider (background writes) whose writes fail after a while, so that writes queue up. */
class SlowFailingProvider extends JsonProvider {
  override async write(): Promise<StoredCheckpoint> {
    await sleep(20);
    throw new Error('the disk was unplugged');
  }
  override async writeBatch(
    _location: string,
    _checkpoints: readonly CheckpointWrite[],
  ): Promise<StoredCheckpoint[]> {
    await sleep(20);
    throw new Error('the disk was unplugged');
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const systemSource = { kind: 'system' as const, id: 'process' };
let directory: { path: string; cleanup: () => void };
let records: LogRecord[];

beforeEach(() => {
  directory = temporaryDirectory('crewline-after-signal-');
  records = [];
  setLogSink((record) => records.push(record));
});

afterEach(() => {
  setLogSink(null);
  directory.cleanup();
});

/** The automatic checkpoint warnings, each with whether it was logged after the signal's emit. */
async function warningsAroundSignal(
  afterSignal?: (run: Run) => Promise<void>,
  onEvents: '*' | CheckpointEventType[] = '*',
): Promise<{ message: string; afterSignal: boolean }[]> {
  const location = join(directory.path, 'cp');
  const provider = new SlowFailingProvider();
  let signalled = false;
  const logged: { message: string; afterSignal: boolean }[] = [];
  setLogSink((record) => {
    if (record.message.includes('automatic checkpoint on'))
      logged.push({ message: record.message, afterSignal: signalled });
  });
  await Run.execute(
    {
      root: emptyFlowEntity,
      config: { ...parseCheckpointConfig({ onEvents, location }), provider },
      inputs: {},
      bus: new EventBus(),
    },
    async (run) => {
      // The first write starts at once; the next events queue behind it.
      for (const value of ['one', 'two', 'three']) {
        run.emit(systemSource, new MemorySaveStartedEvent({ value, source: systemSource }));
      }
      signalled = true;
      // What signals.ts emits into every active run on Ctrl+C.
      run.emit(systemSource, new SigIntEvent({ signal: 'SIGINT', signalNumber: 2, source: systemSource }));
      await afterSignal?.(run);
      await run.state.settle();
    },
  );
  return logged;
}

describe('failed automatic checkpoints logged after a process-ending signal', () => {
  it('say the process is ending, also for the events queued before the signal', async () => {
    const warnings = await warningsAroundSignal();
    const afterSignal = warnings.filter((warning) => warning.afterSignal);
    // The signal's own and at least one queued before it.
    expect(afterSignal.some((warning) => warning.message.includes('automatic checkpoint on SIGINT'))).toBe(
      true,
    );
    expect(
      afterSignal.some((warning) => warning.message.includes('automatic checkpoint on memory_save_started')),
    ).toBe(true);
    for (const warning of afterSignal) {
      expect(warning.message).not.toContain('the run continues');
      expect(warning.message).toMatch(/the process ends (on SIGINT )?without it/);
    }
    const queuedBefore = afterSignal.find((warning) => warning.message.includes('memory_save_started'))!;
    expect(queuedBefore.message).toContain('failed; the process ends on SIGINT without it');
  });

  it('say the process is ending when the signal itself is not checkpointed', async () => {
    const warnings = await warningsAroundSignal(undefined, ['memory_save_started']);
    const afterSignal = warnings.filter((warning) => warning.afterSignal);
    expect(afterSignal.length).toBeGreaterThan(0);
    for (const warning of afterSignal) {
      expect(warning.message).toContain('failed; the process ends on SIGINT without it');
    }
  });

  it('say so for an event the run emits while the signal waits for its writes', async () => {
    const warnings = await warningsAroundSignal(async (run) => {
      run.emit(
        systemSource,
        new TaskStartedEvent({ description: 'in flight at the signal', source: systemSource }),
      );
    });
    const inFlight = warnings.filter((warning) =>
      warning.message.includes('automatic checkpoint on task_started'),
    );
    expect(inFlight).toHaveLength(1);
    expect(inFlight[0]!.message).not.toContain('the run continues');
    expect(inFlight[0]!.message).toContain('the process ends on SIGINT without it');
  });

  it("keep the old wording once the signal's writes settled and the run went on (a handler of the program kept the process running)", async () => {
    const warnings = await warningsAroundSignal(async (run) => {
      await run.state.settle();
      run.emit(systemSource, new TaskStartedEvent({ description: 'after the signal', source: systemSource }));
    });
    const later = warnings.filter((warning) =>
      warning.message.includes('automatic checkpoint on task_started'),
    );
    expect(later).toHaveLength(1);
    expect(later[0]!.message).toContain('the run continues without it');
  });
});
