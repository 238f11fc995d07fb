// What a run pays per checkpoint on Postgres, checkpointing on '*' the way the runtime does it: each
// automatic checkpoint is taken inside its event and queued (`state.writeCheckpoint`, not awaited),
// and before each model or tool call the run waits for every queued one (`state.durable()`).
// PostgresProvider then stores what queued up between two calls as one group (`writeBatch`: one
// transaction), or, with writeBatch hidden, one write (one transaction) after another. LangGraph's
// PostgresSaver, fed the same states, awaits each `put`. Runs of each go in rotating order in one
// process against one server, so the three are measured side by side.
import { PostgresProvider } from '@crewline/provider-postgres';
import { type LatencySummary, summarize } from './bench-statistics.js';
import { timeCheckpoints } from './cost/checkpoint-timing.js';
import { type BenchServer, benchSchema, postgresSaverSubject, withSchema } from './postgres-subjects.js';
import { type Crew50Options, type Crew50Run, createCrew50Run } from './scenario/crew-50.js';

/** Events after which the run makes a model or tool call, and so waits for its checkpoints first. */
const barrierEvents = new Set(['llm_call_started', 'tool_usage_started']);

/** What one run of a subject paid. */
interface RunCost {
  /** Per checkpoint: taking it plus its share of the provider call that stored it, in ms. */
  perCheckpointMs: number[];
  /** Everything the run spent blocked on checkpoints (inside its events and at its barriers), in ms. */
  blockedMs: number;
  checkpoints: number;
  /** Checkpoints per provider call (per commit). */
  groupSizes: number[];
}

interface RunCostSession {
  afterEvent(trigger: string): Promise<void>;
  finish(): Promise<RunCost>;
}

interface RunCostSubject {
  name: string;
  open(run: Crew50Run): RunCostSession;
}

/** PostgresProvider as the runtime uses it, with groups (`writeBatch`) or without. */
function providerSubject(name: string, server: BenchServer, url: string, groups: boolean): RunCostSubject {
  return {
    name,
    open(run) {
      const provider = new PostgresProvider();
      // Without writeBatch the runtime writes a group's checkpoints one by one, each its own commit.
      if (!groups)
        Object.defineProperty(provider, 'writeBatch', {
          value: undefined,
          writable: true,
          configurable: true,
        });
      const schema = benchSchema('cost');
      const location = provider.resolveLocation(withSchema(url, schema));
      const state = run.addState({ provider, location });
      // Each group's whole time is charged: the barrier right after it waits for all of it.
      const timing = timeCheckpoints(provider, undefined, { awaited: true });
      let blockedMs = 0;
      let checkpoints = 0;
      const failures: unknown[] = [];
      return {
        async afterEvent(trigger) {
          const started = performance.now();
          checkpoints += 1;
          void state.writeCheckpoint({ trigger }).catch((error: unknown) => failures.push(error));
          if (barrierEvents.has(trigger)) await state.durable();
          blockedMs += performance.now() - started;
        },
        async finish() {
          const started = performance.now();
          await state.durable();
          blockedMs += performance.now() - started;
          timing.stop();
          await state.settle();
          await provider.close();
          await server.dropSchema(schema);
          if (failures.length > 0) throw failures[0];
          const times = timing.times();
          return {
            perCheckpointMs: times.endToEndMs,
            blockedMs,
            checkpoints,
            groupSizes: times.groupSizes,
          };
        },
      };
    },
  };
}

/** LangGraph's PostgresSaver fed the same states (see postgresSaverSubject), each put awaited. */
async function saverSubject(server: BenchServer, url: string): Promise<RunCostSubject> {
  const storage = await postgresSaverSubject(server, url, new Map());
  return {
    name: 'LangGraph PostgresSaver (each put awaited)',
    open(run) {
      const session = storage.open('', run);
      const perCheckpointMs: number[] = [];
      return {
        async afterEvent(trigger) {
          // The state's snapshot, its channel values and the put: all of it the run's.
          const started = performance.now();
          await session.afterEvent(trigger);
          perCheckpointMs.push(performance.now() - started);
        },
        async finish() {
          await session.finish();
          const blockedMs = perCheckpointMs.reduce((sum, value) => sum + value, 0);
          return {
            perCheckpointMs,
            blockedMs,
            checkpoints: perCheckpointMs.length,
            groupSizes: perCheckpointMs.map(() => 1),
          };
        },
      };
    },
  };
}

/** One subject's runs, pooled. */
export interface MeasuredRunCost {
  name: string;
  perCheckpoint: LatencySummary;
  /** Blocked time over checkpoints, mean over the runs, in ms. */
  meanBlockedMs: number;
  checkpointsPerCommit: number;
  runs: number;
}

async function playOnce(subject: RunCostSubject, scenario: Crew50Options): Promise<RunCost> {
  const run = createCrew50Run(scenario);
  const session = subject.open(run);
  await run.play((trigger) => session.afterEvent(trigger));
  return session.finish();
}

/**
 * Runs crew-50 `rounds` times per subject (after one warm-up run each), in rotating order, and pools
 * what each run paid per checkpoint.
 */
export async function measureRunCost(
  server: BenchServer,
  url: string,
  scenario: Crew50Options,
  rounds: number,
): Promise<MeasuredRunCost[]> {
  const subjects = [
    providerSubject('PostgresProvider, groups (writeBatch: one transaction per group)', server, url, true),
    providerSubject('PostgresProvider, one write per checkpoint (writeBatch hidden)', server, url, false),
    await saverSubject(server, url),
  ];
  for (const subject of subjects) await playOnce(subject, scenario);
  const pooled = subjects.map(() => ({
    perCheckpointMs: [] as number[],
    blocked: 0,
    checkpoints: 0,
    groups: 0,
  }));
  for (let round = 0; round < rounds; round += 1) {
    for (let offset = 0; offset < subjects.length; offset += 1) {
      const index = (round + offset) % subjects.length;
      const cost = await playOnce(subjects[index]!, scenario);
      const entry = pooled[index]!;
      entry.perCheckpointMs.push(...cost.perCheckpointMs);
      entry.blocked += cost.blockedMs;
      entry.checkpoints += cost.checkpoints;
      entry.groups += cost.groupSizes.length;
    }
  }
  return subjects.map((subject, index) => {
    const { perCheckpointMs, blocked, checkpoints, groups } = pooled[index]!;
    return {
      name: subject.name,
      perCheckpoint: summarize(perCheckpointMs),
      meanBlockedMs: blocked / checkpoints,
      checkpointsPerCommit: checkpoints / groups,
      runs: rounds,
    };
  });
}
