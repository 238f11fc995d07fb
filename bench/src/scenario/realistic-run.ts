// The realistic scenario of issue #13, beside crew-50: a real crew (or a flow whose methods run
// crews) on the runtime, 3 agents, prose answers of ≈2 KB sliced from real text, a conversation that
// grows inside each task over several model turns (tool calls whose results are ≈1.5 KB), and every
// output kept. It builds the run; the benchmark decides where it checkpoints and what it measures.
import { Agent, Crew, type CrewlineTool, defineTool, ProjectRegistry, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import type { CheckpointConfigInput } from '@crewline/runtime-state';
import { z } from 'zod';
import type { ProseSource } from './real-prose.js';
import { tenPartFlowClass } from './ten-part-flow.js';

/** Shape and sizes of one realistic run. */
export interface RealisticOptions {
  /** A crew of all the tasks, or a flow of ten methods each running a crew of a tenth of them. */
  shape: 'crew' | 'flow';
  /** Tasks in the whole run. Default 50. */
  tasks?: number;
  /** Size of each model answer (a task's output), in characters. Default 2048. */
  outputBytes?: number;
  /** Size of each tool result, in characters. Default 1536. */
  toolResultBytes?: number;
  /** Tool calls the model makes in each task before it answers (each one a model turn). Default 2. */
  toolCallsPerTask?: number;
  /** The text the answers and tool results are sliced from. */
  source: ProseSource;
  /**
   * Awaited at the start of every tool call: a moment where a real run waits on I/O, which the
   * benchmark uses to feed its peers the states written since the last one. Default: nothing.
   */
  onToolCall?: () => Promise<void>;
}

/** One prepared realistic run. */
export interface RealisticRun {
  /** Runs it to the end with `checkpoint` as the crew's (or the flow's) checkpoint configuration. */
  kickoff(checkpoint: CheckpointConfigInput): Promise<void>;
  /** Tools and models to restore one of its crews with (`Crew.fromCheckpoint(..., { registry })`). */
  registry: ProjectRegistry;
  /** Model calls made so far. */
  modelCalls(): number;
}

/** Methods of the flow shape; each runs a crew of `tasks / FLOW_METHODS` tasks. */
export const FLOW_METHODS = 10;

export function createRealisticRun(options: RealisticOptions): RealisticRun {
  const tasks = options.tasks ?? 50;
  const outputBytes = options.outputBytes ?? 2048;
  const toolResultBytes = options.toolResultBytes ?? 1536;
  const toolCalls = options.toolCallsPerTask ?? 2;
  const { source } = options;
  let toolCallCount = 0;

  const search: CrewlineTool = defineTool({
    name: 'search',
    description: 'Searches the document archive and returns the passages that match',
    inputSchema: z.object({ query: z.string() }),
    execute: async () => {
      await options.onToolCall?.();
      toolCallCount += 1;
      return source.slice(2_000_000 + toolCallCount, toolResultBytes);
    },
  });
  // Each task: `toolCalls` turns that call the search tool, then a turn that answers in prose.
  const model = offlineModel({
    name: 'realistic',
    script: (call) => {
      const turns = call.messages.filter((message) => message.role === 'assistant').length;
      if (call.tools.length > 0 && turns < toolCalls)
        return { toolName: 'search', input: { query: `sources ${turns + 1} for request ${call.index}` } };
      return { text: source.slice(1_000_000 + call.index, outputBytes) };
    },
  });

  function crewOf(count: number, label: string, checkpoint?: CheckpointConfigInput): Crew {
    const agents = ['Researcher', 'Analyst', 'Writer'].map(
      (role, index) =>
        new Agent({
          role,
          goal: `Do the ${role.toLowerCase()} work of the {topic} report`,
          backstory: source.slice(300 + index, 400),
          llm: model,
          tools: [search],
        }),
    );
    return new Crew({
      name: label,
      agents,
      tasks: Array.from(
        { length: count },
        (_, index) =>
          new Task({
            name: `${label}-task-${index + 1}`,
            description: `Section ${index + 1} of part ${label} of the {topic} report: ${source.slice(400 + index, 160)}`,
            expectedOutput: `About ${outputBytes} characters of prose`,
            agent: agents[index % agents.length]!,
          }),
      ),
      ...(checkpoint === undefined ? {} : { checkpoint }),
    });
  }

  const tasksPerMethod = Math.max(1, Math.round(tasks / FLOW_METHODS));
  const ReportFlow = tenPartFlowClass(
    (label) => crewOf(tasksPerMethod, label),
    'licensing',
    'RealisticReportFlow',
  );

  return {
    async kickoff(checkpoint) {
      if (options.shape === 'crew') {
        await crewOf(tasks, 'crew', checkpoint).kickoff({ inputs: { topic: 'licensing' } });
      } else {
        await new ReportFlow({ checkpoint }).kickoff();
      }
    },
    registry: new ProjectRegistry().register({
      tools: { search },
      flows: { RealisticReportFlow: ReportFlow },
    }),
    modelCalls: () => model.calls.length,
  };
}
