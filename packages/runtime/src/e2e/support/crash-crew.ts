import { Agent } from '../../agent/agent.js';
import { Crew } from '../../crew/crew.js';
import type { OfflineModel } from '../../models/offline/offline-model.js';
import { offlineModel } from '../../models/offline/offline-model.js';
import { lookupTool, researchWriteReview } from './fixtures.js';

/** The model of the crash trials: the writer's conversation makes one tool call, others answer at once. */
export function crashModel(latencyMs = 0): OfflineModel {
  return offlineModel({
    name: 'crash',
    latencyMs,
    script: (call) =>
      call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
        ? { toolName: 'lookup', input: { query: 'tides' } }
        : undefined,
  });
}

/** Three agents, three tasks; only the writer has a tool. Same definition in every process. */
export function crashCrew(model: OfflineModel | string, checkpoint?: Crew['checkpoint']): Crew {
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Expert',
    llm: model,
  });
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write about {topic}',
    backstory: 'Expert',
    llm: model,
    tools: [lookupTool],
  });
  const reviewer = new Agent({ role: 'Reviewer', goal: 'Review', backstory: 'Careful', llm: model });
  return new Crew({
    name: 'crash-crew',
    agents: [researcher, writer, reviewer],
    tasks: researchWriteReview(researcher, writer, reviewer),
    ...(checkpoint !== undefined ? { checkpoint } : {}),
  });
}

export const crashInputs = { topic: 'tides' };
