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

/** The JSON provider whose writes wait until the test lets the store fail (a server that times out). */
class GatedFailingProvider extends JsonProvider {
  readonly #failed: Promise<void>;
  constructor(failed: Promise<void>) {
    super();
    this.#failed = failed;
  }
  override async write(): Promise<StoredCheckpoint> {
    await this.#failed;
    throw new Error('the server timed out');
  }
  override async writeBatch(
    _location: string,
    _checkpoints: readonly CheckpointWrite[],
  ): Promise<StoredCheckpoint[]> {
    await this.#failed;
    throw new Error('the server timed out');
  }
}

// signals.ts records no event in a run whose body has returned, but still waits for the writes it
// queued before the process ends: their failures (a Postgres outage at the end of a run, each write
// waiting out queryTimeoutMs, then Ctrl+C) said "the run continues without it".
describe('failed automatic checkpoints of a run that was ending when the signal came', () => {
  // A listener of the program keeps this process (the test's) alive on SIGINT, as a program's own
  // handler would: the runtime then leaves the ending to it instead of raising the signal again.
  const keepAlive = () => undefined;
  beforeEach(() => {
    process.on('SIGINT', keepAlive);
  });
  afterEach(() => {
    process.removeListener('SIGINT', keepAlive);
  });

  /**
   * The automatic checkpoint warnings of run "ending", whose body queued three checkpoints and
   * returned before SIGINT came, and, with `besideActive`, of run "active", still in its body then.
   */
  async function warningsOfEndingRun(besideActive: boolean): Promise<{ ending: string[]; active: string[] }> {
    let failStore!: () => void;
    const failed = new Promise<void>((resolve) => {
      failStore = resolve;
    });
    const warnings = { ending: [] as string[], active: [] as string[] };
    setLogSink((record) => {
      const run = /automatic checkpoint on .* to .*[/\\](ending|active) failed/.exec(record.message)?.[1];
      if (run === 'ending' || run === 'active') warnings[run].push(record.message);
    });
    const execute = (name: string, body: (run: Run) => Promise<void>) =>
      Run.execute(
        {
          root: emptyFlowEntity,
          config: {
            ...parseCheckpointConfig({ onEvents: '*', location: join(directory.path, name) }),
            provider: new GatedFailingProvider(failed),
          },
          inputs: {},
          bus: new EventBus(),
        },
        body,
      );
    let signalled!: () => void;
    const signalDelivered = new Promise<void>((resolve) => {
      signalled = resolve;
    });
    const active = besideActive ? execute('active', () => signalDelivered) : undefined;
    let endingRun: Run | undefined;
    const ending = execute('ending', async (run) => {
      endingRun = run;
      for (const value of ['one', 'two', 'three']) {
        run.emit(systemSource, new MemorySaveStartedEvent({ value, source: systemSource }));
      }
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(endingRun?.ending).toBe(true);
    expect(endingRun?.state.hasPendingWork).toBe(true);
    // What a real Ctrl+C does in this process: the runtime's listener first, then the program's.
    process.emit('SIGINT', 'SIGINT');
    signalled();
    failStore();
    await Promise.all([ending, active]);
    // Nothing of the runtime's is left listening once no run is active.
    expect(process.listeners('SIGINT')).toEqual([keepAlive]);
    return warnings;
  }

  it('say the process ends on the signal', async () => {
    const warnings = await warningsOfEndingRun(false);
    expect(warnings.ending).toHaveLength(3);
    for (const message of warnings.ending) {
      expect(message).toContain('automatic checkpoint on memory_save_started');
      expect(message).toContain('failed; the process ends on SIGINT without it');
    }
  });

  it('say so too beside a run that is still active and records the signal', async () => {
    const warnings = await warningsOfEndingRun(true);
    expect(warnings.active).toHaveLength(1);
    expect(warnings.active[0]).toContain('automatic checkpoint on SIGINT');
    expect(warnings.active[0]).toContain('failed; the process ends without it');
    expect(warnings.ending).toHaveLength(3);
    for (const message of warnings.ending) {
      expect(message).toContain('failed; the process ends on SIGINT without it');
    }
  });
});
