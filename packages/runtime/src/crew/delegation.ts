import {
  AgentExecutionCompletedEvent,
  AgentExecutionStartedEvent,
  CrewlineError,
  type EventContext,
  type EventSource,
} from '@crewline/events';
import { z } from 'zod';
import { runAgentWork } from '../agent/agent-work.js';
import { newConversation } from '../agent-loop/conversation.js';
import type { Run } from '../checkpointing/run.js';
import type { Task } from '../task/task.js';
import { type CrewlineTool, defineTool } from '../tools/define-tool.js';
import type { CrewParts } from './crew-parts.js';

export const DELEGATION_TOOL_NAME = 'delegate_work_to_coworker';

export interface DelegationToolOptions {
  crew: CrewParts;
  run: Run;
  /** The task the manager is working on; delegated conversations are saved on it. */
  task: Task;
  /** The manager's event context for this task. */
  context: EventContext;
  abortSignal: AbortSignal | undefined;
}

/**
 * The tool a hierarchical crew's manager delegates with. Each delegation runs the coworker's own
 * agent loop in a conversation saved on the task under the tool call's id, so a run interrupted in
 * the middle of a delegation continues that coworker's conversation instead of starting it again.
 */
export function delegationTool(options: DelegationToolOptions): CrewlineTool {
  const { crew, run, task } = options;
  const roles = crew.agents.map((agent) => agent.role);
  return defineTool({
    name: DELEGATION_TOOL_NAME,
    description: `Give work to one of your coworkers (${roles.join(', ')}) and get their answer back. They know nothing about your task except what you write, so include everything they need.`,
    inputSchema: z.object({
      coworker: z.string().describe(`The role of the coworker: one of ${roles.join(', ')}`),
      task: z.string().describe('What the coworker should do, in full'),
      context: z.string().optional().describe('Everything the coworker needs to know to do it'),
    }),
    async execute(input, { toolCallId }) {
      const wanted = input.coworker.trim().toLowerCase();
      const coworker = crew.agents.find((agent) => agent.role.trim().toLowerCase() === wanted);
      if (!coworker) {
        throw new CrewlineError(
          'runtime',
          'invalid_argument',
          `no coworker has the role "${input.coworker}"; choose one of: ${roles.join(', ')}`,
        );
      }
      const context: EventContext = { ...options.context, agentId: coworker.id, agentRole: coworker.role };
      const source: EventSource = { kind: 'agent', id: coworker.id, name: coworker.role };
      let conversation = task.delegations[toolCallId];
      if (!conversation) {
        conversation = newConversation();
        conversation.messages.push({
          role: 'user',
          content: input.context
            ? `${input.task}\n\nThis is the context you are working with:\n${input.context}`
            : input.task,
        });
        // On the task before any call, so every checkpoint from here on holds this delegation.
        task.delegations[toolCallId] = conversation;
        run.emit(
          source,
          new AgentExecutionStartedEvent({
            role: coworker.role,
            taskDescription: input.task,
            source,
            context,
          }),
        );
      }
      const result = await runAgentWork({
        agent: coworker,
        run,
        conversation,
        prompt: '',
        inputs: crew.inputs,
        context,
        abortSignal: options.abortSignal,
        telemetry: crew.telemetry,
      });
      run.emit(
        source,
        new AgentExecutionCompletedEvent({ role: coworker.role, output: result.output, source, context }),
      );
      return result.output;
    },
  });
}
