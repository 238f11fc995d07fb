import { Agent, Crew, Task } from '@crewline/runtime';
import type { CheckpointSetting } from '@crewline/runtime-state';

/** The crew's name: what checkpoints, `crewline checkpoint list` and the browser show. */
export const CREW_NAME = 'research-crew';

/** Index of the research task; its output is what `--edit-research` replaces on a fork. */
export const RESEARCH_TASK = 0;

export interface TutorialCrewOptions {
  /** A `provider:model` id (stored as is in checkpoints, so `crewline checkpoint resume` can rebuild the crew). */
  llm: string;
  /** The crew's `checkpoint` option: `true` in the tutorial. */
  checkpoint: CheckpointSetting;
}

/**
 * The tutorial's crew: a Researcher and a Writer, one task each, checkpointing on. Everything in it is
 * declarative (roles, templates, a model id), so a checkpoint alone is enough to rebuild it.
 */
export function buildTutorialCrew(options: TutorialCrewOptions): Crew {
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Find what matters about {topic}',
    backstory: 'You dig up facts quickly and list them plainly.',
    llm: options.llm,
  });
  const writer = new Agent({
    role: 'Writer',
    goal: 'Explain {topic} to a busy reader',
    backstory: 'You turn notes into one clear paragraph.',
    llm: options.llm,
  });
  return new Crew({
    name: CREW_NAME,
    agents: [researcher, writer],
    tasks: [
      new Task({
        name: 'research',
        description: 'Research {topic}',
        expectedOutput: 'five short bullet points',
        agent: researcher,
      }),
      new Task({
        name: 'write',
        description: 'Write a summary of {topic} from the research',
        expectedOutput: 'one paragraph',
        agent: writer,
      }),
    ],
    checkpoint: options.checkpoint,
  });
}
