// The crew-like entity of provider-sqlite's incremental-storage tests (same file name there).
import { EventBus, LLMCallCompletedEvent, TaskCompletedEvent, TaskStartedEvent } from '@crewline/events';
import {
  type CheckpointableEntity,
  type CheckpointProvider,
  type EntitySnapshot,
  type EntitySummary,
  type JsonObject,
  RuntimeState,
} from '@crewline/runtime-state';

/** Deterministic filler text of `length` characters. */
export function filler(seed: number, length: number): string {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa'];
  let text = '';
  let state = seed;
  while (text.length < length) {
    state = (state * 1103515245 + 12345) % 2147483648;
    text += `${words[state % words.length]} `;
  }
  return text.slice(0, length);
}

interface Task {
  id: string;
  description: string;
  status: 'pending' | 'running' | 'completed';
  output: string | null;
  messages: string[];
}

/** A crew-like entity whose snapshot grows as its tasks complete (tests of incremental storage). */
export class GrowingCrew implements CheckpointableEntity {
  readonly entityKind = 'crew' as const;
  readonly entityId: string;
  readonly entityName = 'Growing crew';
  tasks: Task[];
  progress = { step: 0, lastEvent: '' };

  constructor(taskCount: number, id = 'growing-crew') {
    this.entityId = id;
    this.tasks = Array.from({ length: taskCount }, (_, index) => ({
      id: `task-${index}`,
      description: `Task ${index}: ${filler(index, 150)}`,
      status: 'pending',
      output: null,
      messages: [],
    }));
  }

  static fromSnapshot(snapshot: EntitySnapshot): GrowingCrew {
    const data = snapshot.data as unknown as { tasks: Task[]; progress: { step: number; lastEvent: string } };
    const crew = new GrowingCrew(0, snapshot.id);
    crew.tasks = data.tasks.map((task) => ({ ...task, messages: [...task.messages] }));
    crew.progress = { ...data.progress };
    return crew;
  }

  snapshotEntity(): EntitySnapshot {
    return {
      kind: this.entityKind,
      id: this.entityId,
      name: this.entityName,
      data: {
        tasks: this.tasks.map((task) => ({ ...task, messages: [...task.messages] })),
        progress: { ...this.progress },
      } as unknown as JsonObject,
    };
  }

  summarizeEntity(): EntitySummary {
    const completed = this.tasks.filter((task) => task.status === 'completed').length;
    return { kind: 'crew', id: this.entityId, name: this.entityName, completed, total: this.tasks.length };
  }
}

export interface GrowingRun {
  state: RuntimeState;
  crew: GrowingCrew;
  /** Records one event (the next step of the next task) and updates the crew; returns its type. */
  step(): string;
}

/**
 * A run of a {@link GrowingCrew}: each step is one event (task started, an LLM answer of
 * `outputBytes`, task completed with the output), so one checkpoint per step adds one event.
 */
export function growingRun(options: {
  provider?: CheckpointProvider;
  location?: string;
  tasks?: number;
  outputBytes?: number;
  crew?: GrowingCrew;
  state?: RuntimeState;
}): GrowingRun {
  const crew = options.crew ?? new GrowingCrew(options.tasks ?? 20);
  const outputBytes = options.outputBytes ?? 1000;
  const state =
    options.state ??
    new RuntimeState({
      entities: [crew],
      inputs: { topic: 'incremental storage' },
      provider: options.provider,
      location: options.location,
      bus: new EventBus(),
    });
  let phase = 0;
  return {
    state,
    crew,
    step() {
      const task = crew.tasks.find((candidate) => candidate.status !== 'completed');
      crew.progress.step += 1;
      if (task === undefined) {
        const event = new TaskStartedEvent({ description: 'idle' });
        state.recordEvent(event);
        crew.progress.lastEvent = event.eventId;
        return event.type;
      }
      const seed = crew.progress.step;
      let event: TaskStartedEvent | LLMCallCompletedEvent | TaskCompletedEvent;
      if (phase === 0) {
        task.status = 'running';
        event = new TaskStartedEvent({ description: task.description });
      } else if (phase === 1) {
        const answer = filler(seed, outputBytes);
        task.messages.push(answer);
        event = new LLMCallCompletedEvent({
          model: 'offline:test',
          callId: `${task.id}-1`,
          response: answer,
        });
      } else {
        task.status = 'completed';
        task.output = task.messages.at(-1) ?? '';
        task.messages = [];
        event = new TaskCompletedEvent({ description: task.description, output: task.output });
      }
      phase = (phase + 1) % 3;
      state.recordEvent(event);
      crew.progress.lastEvent = event.eventId;
      return event.type;
    },
  };
}

/** Writes `count` one-event checkpoints of a run, one after another; returns their ids. */
export async function advance(run: GrowingRun, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1)
    ids.push((await run.state.writeCheckpoint({ trigger: run.step() })).id);
  return ids;
}
