import {
  AgentExecutionCompletedEvent,
  AgentExecutionStartedEvent,
  type BaseEvent,
  EventBus,
  LLMCallCompletedEvent,
  LLMCallStartedEvent,
  TaskCompletedEvent,
  TaskStartedEvent,
  ToolUsageFinishedEvent,
  ToolUsageStartedEvent,
} from '@crewline/events';
import { type CheckpointProvider, RuntimeState } from '@crewline/runtime-state';
import { BenchCrew, type BenchMessage, type SnapshotStyle } from './bench-crew.js';
import { prose } from './prose.js';

/** Shape of the SPEC §8 reference scenario. */
export interface Crew50Options {
  /** Tasks in the crew. Default 50. */
  tasks?: number;
  /** Size of each task output and each LLM response, in bytes. Default 2048. */
  outputBytes?: number;
  /** Seed of the generated text, so runs are repeatable. Default 1. */
  seed?: number;
  /** How the crew builds its snapshots (see {@link SnapshotStyle}). Default `'runtime'`. */
  snapshots?: SnapshotStyle;
  /**
   * Tasks already done when the run starts, as in a resumed or forked run: they hold their outputs
   * (the text the full run gives them) and `play` emits no events for them. Default 0.
   */
  completedTasks?: number;
  /** The checkpoint this run was forked from: its first write names it as the parent. Default none. */
  forkedFrom?: string;
}

export interface Crew50Run {
  /** The run's state (no provider unless one was given). */
  state: RuntimeState;
  crew: BenchCrew;
  /**
   * Another state of the same run, recording the same events, writing to its own provider: lets
   * several backends store the very same state sequence side by side.
   */
  addState(options: { provider: CheckpointProvider; location: string }): RuntimeState;
  /**
   * Plays the run one event at a time: records the event in every state, updates the crew as a
   * real run would, then calls `afterEvent` with the event type (where a benchmark writes checkpoints).
   */
  play(afterEvent: (eventType: string) => void | Promise<void>): Promise<number>;
}

/**
 * A model or tool call of the scenario. It has no latency, but like the network or process I/O of a
 * real call it completes in a later turn of the event loop, where timers (a provider's idle-time
 * housekeeping, for one) get their turn as they would in a real run.
 */
function modelOrToolCall(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The crew-50 scenario: 3 agents and 50 tasks, each task producing ten events
 * (task_started, agent_execution_started, llm_call_started, llm_call_completed with a ≈2 KB
 * response, tool_usage_started/finished, llm_call_started/completed with the ≈2 KB answer,
 * agent_execution_completed, task_completed with the output), on a real {@link RuntimeState}.
 */
export function createCrew50Run(
  options: Crew50Options & { provider?: CheckpointProvider; location?: string; branch?: string } = {},
): Crew50Run {
  const taskCount = options.tasks ?? 50;
  const outputBytes = options.outputBytes ?? 2048;
  const seed = options.seed ?? 1;
  const crew = new BenchCrew(taskCount, options.snapshots ?? 'runtime');
  const completedTasks = Math.min(options.completedTasks ?? 0, taskCount);
  for (const [index, task] of crew.tasks.slice(0, completedTasks).entries()) {
    const answer = prose(seed * 100_000 + index * 10 + 3, outputBytes);
    task.status = 'completed';
    task.startedAt = new Date().toISOString();
    task.completedAt = task.startedAt;
    task.output = { raw: answer, summary: answer.slice(0, 120), agent: task.agentRole, format: 'raw' };
  }
  const newState = (provider: CheckpointProvider | undefined, location: string | undefined) =>
    new RuntimeState({
      entities: [crew],
      inputs: { topic: 'AI agents', audience: 'engineering leads', depth: 3 },
      provider,
      location,
      bus: new EventBus(),
      lineage: {
        branch: options.branch ?? 'main',
        ...(options.forkedFrom !== undefined ? { checkpointId: options.forkedFrom } : {}),
      },
    });
  const state = newState(options.provider, options.location);
  const states = [state];

  async function play(afterEvent: (eventType: string) => void | Promise<void>): Promise<number> {
    let count = 0;
    const emit = async (event: BaseEvent) => {
      for (const each of states) each.recordEvent(event);
      crew.context.lastEventId = event.eventId;
      crew.context.emissionSequence = event.sequence;
      count += 1;
      await afterEvent(event.type);
    };
    for (const [index, task] of crew.tasks.entries()) {
      if (index < completedTasks) continue;
      const agent = crew.agentFor(task);
      const source = { kind: 'task' as const, id: task.id };
      const context = {
        crewId: crew.entityId,
        taskId: task.id,
        taskIndex: index,
        agentId: agent.id,
        agentRole: agent.role,
      };
      const textSeed = seed * 100_000 + index * 10;

      task.status = 'running';
      task.startedAt = new Date().toISOString();
      crew.context.currentTaskId = task.id;
      await emit(new TaskStartedEvent({ description: task.description, source, context }));

      const conversation: { messages: BenchMessage[]; iterations: number } = {
        messages: [
          { role: 'system', content: `You are the ${agent.role}. ${agent.goal}` },
          { role: 'user', content: `${task.description}\nExpected output: ${task.expectedOutput}` },
        ],
        iterations: 0,
      };
      task.conversation = conversation;
      await emit(
        new AgentExecutionStartedEvent({
          role: agent.role,
          taskDescription: task.description,
          source,
          context,
        }),
      );

      const firstCall = `${task.id}-call-1`;
      await emit(
        new LLMCallStartedEvent({
          model: agent.llm,
          callId: firstCall,
          messageCount: conversation.messages.length,
          source,
          context,
        }),
      );
      await modelOrToolCall();
      const thought = prose(textSeed + 1, outputBytes);
      conversation.messages.push({ role: 'assistant', content: thought });
      conversation.iterations += 1;
      crew.usage.inputTokens += 900;
      crew.usage.outputTokens += 500;
      crew.usage.totalTokens += 1400;
      crew.usage.requests += 1;
      await emit(
        new LLMCallCompletedEvent({
          model: agent.llm,
          callId: firstCall,
          response: thought,
          toolCalls: [{ toolName: 'search', toolCallId: `${task.id}-tool-1` }],
          usage: { inputTokens: 900, outputTokens: 500, totalTokens: 1400 },
          source,
          context,
        }),
      );

      const toolCallId = `${task.id}-tool-1`;
      await emit(
        new ToolUsageStartedEvent({
          toolName: 'search',
          toolCallId,
          args: { query: `${task.id} sources` },
          source,
          context,
        }),
      );
      await modelOrToolCall();
      const toolResult = prose(textSeed + 2, 400);
      conversation.messages.push({ role: 'tool', content: toolResult, toolCallId });
      await emit(
        new ToolUsageFinishedEvent({ toolName: 'search', toolCallId, result: toolResult, source, context }),
      );

      const secondCall = `${task.id}-call-2`;
      await emit(
        new LLMCallStartedEvent({
          model: agent.llm,
          callId: secondCall,
          messageCount: conversation.messages.length,
          source,
          context,
        }),
      );
      await modelOrToolCall();
      const answer = prose(textSeed + 3, outputBytes);
      conversation.messages.push({ role: 'assistant', content: answer });
      conversation.iterations += 1;
      crew.usage.inputTokens += 1600;
      crew.usage.outputTokens += 520;
      crew.usage.totalTokens += 2120;
      crew.usage.requests += 1;
      await emit(
        new LLMCallCompletedEvent({
          model: agent.llm,
          callId: secondCall,
          response: answer,
          usage: { inputTokens: 1600, outputTokens: 520, totalTokens: 2120 },
          source,
          context,
        }),
      );
      await emit(
        new AgentExecutionCompletedEvent({ role: agent.role, output: answer.slice(0, 200), source, context }),
      );

      task.status = 'completed';
      task.completedAt = new Date().toISOString();
      task.output = { raw: answer, summary: answer.slice(0, 120), agent: agent.role, format: 'raw' };
      task.conversation = null;
      crew.context.currentTaskId = null;
      await emit(new TaskCompletedEvent({ description: task.description, output: answer, source, context }));
    }
    return count;
  }

  return {
    state,
    crew,
    addState({ provider, location }) {
      const added = newState(provider, location);
      states.push(added);
      return added;
    },
    play,
  };
}
