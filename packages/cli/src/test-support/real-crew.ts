import { join } from 'node:path';
import type { CheckpointEventType } from '@crewline/events';
import { Agent, Crew, Task } from '@crewline/runtime';
import type { CheckpointProvider, StoredCheckpoint } from '@crewline/runtime-state';
import { type FixtureKind, providerOf } from './fixtures.js';

export interface CrewRun {
  kind: FixtureKind;
  location: string;
  relative: string;
  /** Checkpoints of the run, oldest first (one per completed task). */
  checkpoints: StoredCheckpoint[];
  close(): Promise<void>;
}

export interface CrewRunOptions {
  /**
   * The provider the run writes with, for a run whose checkpoints store options of their own (a
   * continuation then rebuilds a provider with them). Default: `providerOf(kind)`, with defaults.
   */
  provider?: CheckpointProvider;
  /**
   * The events the run checkpoints on (a continuation keeps them). Default: `['task_completed']`;
   * add `'SIGINT'` for a run that writes a checkpoint on its way out of a Ctrl+C.
   */
  onEvents?: CheckpointEventType[];
}

/**
 * Runs a real crew (runtime `Crew`, offline model given as a `provider:model` id, so it is rebuilt
 * from the checkpoint alone) of three tasks with checkpoints on `task_completed`, in `directory`.
 */
export async function writeCrewRun(
  kind: FixtureKind,
  directory: string,
  options: CrewRunOptions = {},
): Promise<CrewRun> {
  const relative = kind === 'json' ? '.checkpoints' : '.checkpoints.db';
  const location = join(directory, relative);
  const provider = options.provider ?? (await providerOf(kind));
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Careful',
    llm: 'offline:cli-test',
  });
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write about {topic}',
    backstory: 'Clear',
    llm: 'offline:cli-test',
  });
  const crew = new Crew({
    name: 'Research crew',
    agents: [researcher, writer],
    tasks: [
      new Task({
        name: 'research',
        description: 'Research {topic}',
        expectedOutput: 'Bullet points',
        agent: researcher,
      }),
      new Task({
        name: 'outline',
        description: 'Outline an article on {topic}',
        expectedOutput: 'An outline',
        agent: writer,
      }),
      new Task({
        name: 'write',
        description: 'Write the article',
        expectedOutput: 'A paragraph',
        agent: writer,
      }),
    ],
    checkpoint: { location, provider, onEvents: options.onEvents ?? ['task_completed'] },
  });
  await crew.kickoff({ inputs: { topic: 'tide pools' } });
  const checkpoints = await provider.list(provider.resolveLocation(location));
  return { kind, location, relative, checkpoints, close: async () => provider.close?.() };
}
