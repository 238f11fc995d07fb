import {
  type BaseEvent,
  checkpointLifecycleEventTypes,
  type EventBus,
  type HandlerState,
  LLMCallCompletedEvent,
  logger,
} from '@crewline/events';
import { type CheckpointConfig, type RuntimeState, triggersOn } from '@crewline/runtime-state';
import { isProcessEndingSignal, noteProcessEndingSignal, processEndingSignalOf } from './signals.js';

/**
 * What automatic checkpoints need of a run: a `Run` (described here, so that run.ts and this module
 * do not import each other).
 */
export interface AutoCheckpointRun {
  readonly state: Pick<RuntimeState, 'writeCheckpoint' | 'writeCheckpointSync' | 'settle'>;
  configForEvent(event: BaseEvent): CheckpointConfig | undefined;
}

const component = 'runtime';
const lifecycle: ReadonlySet<string> = new Set(checkpointLifecycleEventTypes);
const installed = new WeakSet<EventBus>();

/**
 * Registers, once per bus, the listener that writes automatic checkpoints. Unlike a listener keyed
 * on the event's source object, it resolves every event to the run it happened in (through the
 * state the bus passes) and to the config of the entity named in the event's context, so LLM, tool,
 * memory and signal events trigger checkpoints too. `runOfState` is `Run.ofState`.
 */
export function installAutoCheckpoint(
  bus: EventBus,
  runOfState: (state: HandlerState) => AutoCheckpointRun | undefined,
): void {
  if (installed.has(bus)) return;
  installed.add(bus);
  bus.onAny(
    (_source: unknown, event: BaseEvent, state: HandlerState) => {
      // Checked again: a bus from an older copy of @crewline/events ignores `except`.
      if (lifecycle.has(event.type)) return;
      const run = runOfState(state);
      if (!run) return;
      // Before the config is looked at: the process ends on the signal whether or not it is checkpointed.
      if (isProcessEndingSignal(event.type)) noteProcessEndingSignal(run, event.type);
      const config = run.configForEvent(event);
      if (!config || !triggersOn(config, event.type)) return;
      writeAutomaticCheckpoint(run, config, event.type);
    },
    // Lifecycle events never trigger a checkpoint; saying so lets the bus tell a run's state that
    // nobody listens for them (`bus.wants`), so it does not build them for each write.
    { except: lifecycle },
  );
}

/** What happens after an automatic checkpoint on `trigger` failed, as the warning says it. */
function whatHappensNext(run: AutoCheckpointRun, trigger: string): string {
  const signal = isProcessEndingSignal(trigger) ? trigger : processEndingSignalOf(run);
  if (signal === undefined) return 'the run continues without it';
  // After a signal's checkpoint has settled, its default action (or signal-exit's) ends the process.
  const ending =
    signal === trigger ? 'the process ends without it' : `the process ends on ${signal} without it`;
  return `${ending} (a resume starts from the last checkpoint stored), unless a ${signal} handler of the program keeps it running`;
}

/**
 * Best-effort: a failed write is logged with its reason and the run goes on (after a process-ending
 * signal, the process ends). The checkpoint is always taken inside the emit, so it holds exactly the
 * state at the event. Providers that can write synchronously store it there too, durable before the
 * run moves on — unless they ask for background writes (`capabilities.backgroundWrites`:
 * JsonProvider's fsync'd files, SqliteProvider's group commit). Those, and providers without
 * `writeSync`, store it in the background, in order; the run waits for them before its next model or
 * tool call (`state.durable()`), on a signal, and before it ends. A provider that
 * `commitsCompletionsAtOnce` (SQLite) still stores a model completion's checkpoint inside its event,
 * with what was queued before it: the call it records was paid for, and a kill later in the same
 * turn must not lose it.
 */
function writeAutomaticCheckpoint(run: AutoCheckpointRun, config: CheckpointConfig, trigger: string): void {
  const provider = config.provider;
  const options = {
    location: config.location,
    trigger,
    ...(provider ? { provider } : {}),
    ...(config.maxCheckpoints !== undefined ? { maxCheckpoints: config.maxCheckpoints } : {}),
  };
  // Worded when it fails, not when it is queued: a signal may have come in between.
  const describeFailure = (error: unknown) =>
    logger.warn(
      component,
      `automatic checkpoint on ${trigger} to ${config.location} failed; ${whatHappensNext(run, trigger)}`,
      error,
    );
  try {
    const capabilities = provider?.capabilities;
    if (
      provider?.writeSync &&
      capabilities?.syncWrite !== false &&
      (capabilities?.backgroundWrites !== true ||
        (capabilities.commitsCompletionsAtOnce === true && trigger === LLMCallCompletedEvent.type))
    ) {
      run.state.writeCheckpointSync(options);
    } else {
      void run.state.writeCheckpoint(options).catch(describeFailure);
    }
  } catch (error) {
    describeFailure(error);
  }
}
