// The checkpoints the CLI benchmark lists and reads: written by real crews of the runtime (offline
// model), so they hold exactly what a user's run stores and the CLI validates them as it would a
// user's. A hand-made crew snapshot went stale once: the checkpoint schema grew stricter and
// `crewline info` rejected the benchmark's data.
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import type { CheckpointProvider } from '@crewline/runtime-state';

/** Tasks of each crew run: a checkpoint per completed task. */
export const TASKS_PER_RUN = 10;

/** Tasks a forked run picks up from: it restores the checkpoint of this task and completes the rest. */
const FORK_AFTER_TASK = 5;

/** Every this many runs, one is a fork of the run before onto a branch of its own. */
const FORK_EVERY = 10;

const model = offlineModel({ name: 'cli-bench' });

function benchCrew(tasks: number, checkpoint: { provider: CheckpointProvider; location: string }): Crew {
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Expert',
    llm: model,
  });
  return new Crew({
    name: 'Bench crew',
    agents: [researcher],
    tasks: Array.from(
      { length: tasks },
      (_, index) =>
        new Task({
          description: `Step ${index + 1} about {topic}`,
          expectedOutput: 'A paragraph',
          agent: researcher,
        }),
    ),
    checkpoint: { ...checkpoint, onEvents: ['task_completed'] },
  });
}

/**
 * Writes exactly `count` checkpoints at `location`: crew runs of {@link TASKS_PER_RUN} tasks on
 * `main`, a checkpoint after each task; every tenth run instead forks the previous run after its
 * fifth task onto a branch of its own (`experiment-<run>`) and completes the other five. The last run
 * has fewer tasks when `count` asks for it. Returns the number of branches forked.
 */
export async function writeCrewCheckpoints(
  provider: CheckpointProvider,
  location: string,
  count: number,
): Promise<number> {
  let written = 0;
  let forks = 0;
  let previousRun: Crew | undefined;
  for (let run = 0; written < count; run += 1) {
    const left = count - written;
    const lastOfPrevious = previousRun?.lastCheckpoint;
    if (
      run % FORK_EVERY === FORK_EVERY - 1 &&
      lastOfPrevious !== undefined &&
      left >= TASKS_PER_RUN - FORK_AFTER_TASK
    ) {
      const previousCheckpoints = await provider.list(location, { lineageId: lastOfPrevious.lineageId });
      const forkFrom = previousCheckpoints[FORK_AFTER_TASK - 1]!.reference;
      const fork = await Crew.fork(
        { restoreFrom: forkFrom, provider, location },
        { branch: `experiment-${run}` },
      );
      await fork.kickoff();
      written += TASKS_PER_RUN - FORK_AFTER_TASK;
      forks += 1;
      continue;
    }
    const tasks = Math.min(TASKS_PER_RUN, left);
    previousRun = benchCrew(tasks, { provider, location });
    await previousRun.kickoff({ inputs: { topic: 'benchmarks' } });
    written += tasks;
  }
  return forks;
}
