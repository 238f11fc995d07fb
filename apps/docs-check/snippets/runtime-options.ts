// The option lists of packages/runtime/README.md. Compiled, not run: destructuring each options type
// fails the typecheck when the README names an option that does not exist.
import type { AgentOptions, CrewOptions, TaskOptions } from '@crewline/runtime';
import { Agent, Crew, Task } from '@crewline/runtime';

export function agentWith({
  role,
  goal,
  backstory,
  llm,
  tools,
  maxIterations,
  settings,
  telemetry,
  memory,
  knowledgeSources,
  checkpoint,
}: AgentOptions) {
  // #region agent
  new Agent({
    role,
    goal,
    backstory,
    llm,
    tools,
    maxIterations,
    settings,
    telemetry,
    memory,
    knowledgeSources,
    checkpoint,
  });
  // #endregion agent
}

export function taskWith({ description, expectedOutput, agent, context, outputSchema, name }: TaskOptions) {
  // #region task
  new Task({ description, expectedOutput, agent, context, outputSchema, name });
  // #endregion task
}

export function crewWith({
  name,
  agents,
  tasks,
  process,
  manager,
  managerLlm,
  memory,
  knowledgeSources,
  checkpoint,
  cachePreload,
  cachePreloadStrategy,
  restoreKey,
  telemetry,
}: CrewOptions) {
  // #region crew
  new Crew({
    name,
    agents,
    tasks,
    process,
    manager,
    managerLlm,
    memory,
    knowledgeSources,
    checkpoint,
    cachePreload,
    cachePreloadStrategy,
    restoreKey,
    telemetry,
  });
  // #endregion crew
}
