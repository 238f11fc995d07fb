import {
  AgentExecutionCompletedEvent,
  AgentExecutionErrorEvent,
  AgentExecutionStartedEvent,
  type BaseEvent,
  CrewKickoffCompletedEvent,
  CrewKickoffFailedEvent,
  CrewKickoffStartedEvent,
  type EventContext,
  type EventSource,
  TaskCompletedEvent,
  TaskFailedEvent,
  TaskStartedEvent,
} from '@crewline/events';
import type { Agent } from '../agent/agent.js';
import { runAgentWork } from '../agent/agent-work.js';
import { recallSections } from '../agent/recall.js';
import {
  addUsage,
  emptyUsage,
  newConversation,
  sumUsage,
  type TokenUsage,
} from '../agent-loop/conversation.js';
import { sharedPrefixLength } from '../cache-preload/common-prefix.js';
import { preloadCaches } from '../cache-preload/preload-caches.js';
import { systemPromptFor } from '../cache-preload/system-prompt.js';
import { stoppedByLeaseRelease } from '../checkpointing/lineage-lease.js';
import type { Run } from '../checkpointing/run.js';
import type { Task } from '../task/task.js';
import { TaskOutput } from '../task/task-output.js';
import { CrewOutput } from './crew-output.js';
import type { CrewParts } from './crew-parts.js';
import { delegationTool } from './delegation.js';
import { taskPrompt } from './task-prompt.js';

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Who works on a task: its agent, or the manager in a hierarchical crew. */
function workerFor(crew: CrewParts, task: Task): Agent {
  return crew.process === 'hierarchical' ? crew.manager! : task.agent!;
}

/** Tokens of the whole crew so far: every task's conversation, delegations and cache probes. */
function crewUsage(crew: CrewParts): TokenUsage {
  const usages: TokenUsage[] = [crew.probeUsage];
  for (const task of crew.tasks) {
    if (task.conversation) usages.push(task.conversation.usage);
    else if (task.output) usages.push(task.output.usage);
    for (const delegation of Object.values(task.delegations)) usages.push(delegation.usage);
  }
  return sumUsage(usages);
}

/**
 * Runs the crew's pending tasks in order inside `run`. Completed tasks are skipped and their outputs
 * reused; each step's progress is on the task before its event is emitted, so a checkpoint written
 * on any event can continue from exactly there.
 */
export async function executeCrew(
  crew: CrewParts,
  run: Run,
  abortSignal: AbortSignal | undefined,
  /** The run is a fork of the crew's checkpoint (`Crew.fork`): its end is its branch's first checkpoint. */
  forked = false,
): Promise<CrewOutput> {
  const crewSource: EventSource = { kind: 'crew', id: crew.id, name: crew.name };
  const crewContext: EventContext = { crewId: crew.id };
  const emit = (source: unknown, event: BaseEvent) => run.emit(source, event);
  // Restored at its completed end (its status is set to completed just as crew_kickoff_completed is
  // emitted, so that event is in the run's history already): the saved result is given back and
  // nothing is emitted, so a resume of a finished run writes no checkpoint that says nothing new
  // (one per resume, pushing older ones out under maxCheckpoints). A crew stopped after its last task
  // but before that event is still running, and ends below as any other. A fork ends below too: its
  // end is the first checkpoint of its branch, which names the checkpoint it was forked from.
  if (
    !forked &&
    crew.status === 'completed' &&
    crew.tasks.every((task) => task.status === 'completed' && task.output)
  )
    return crewOutput(crew);
  crew.status = 'running';
  if (!crew.kickoffStarted) {
    crew.kickoffStarted = true;
    emit(
      crewSource,
      new CrewKickoffStartedEvent({
        crewName: crew.name,
        inputs: crew.inputs,
        source: crewSource,
        context: crewContext,
      }),
    );
  }
  try {
    const pending = crew.tasks.filter((task) => task.status !== 'completed');
    const splitAt = pending.length > 0 ? await warmCaches(crew, run) : undefined;
    for (const [index, task] of crew.tasks.entries()) {
      if (task.status === 'completed' && task.output) continue;
      await runTask(crew, run, task, index, splitAt, abortSignal);
    }
    crew.status = 'completed';
    const output = crewOutput(crew);
    emit(
      crewSource,
      new CrewKickoffCompletedEvent({
        crewName: crew.name,
        output: output.raw,
        tokenUsage: { ...output.tokenUsage },
        source: crewSource,
        context: crewContext,
      }),
    );
    return output;
  } catch (error) {
    // Stopped as its process ends on a signal: still running as far as its checkpoints tell.
    if (stoppedByLeaseRelease(error)) throw error;
    crew.status = 'failed';
    emit(
      crewSource,
      new CrewKickoffFailedEvent({
        crewName: crew.name,
        error: describe(error),
        source: crewSource,
        context: crewContext,
      }),
    );
    throw error;
  }
}

/** The result of a crew whose tasks are all completed. */
function crewOutput(crew: CrewParts): CrewOutput {
  return new CrewOutput(
    crew.tasks.map((task) => task.output!),
    crewUsage(crew),
  );
}

/**
 * Cache preload (best-effort): one 1-token probe per worker system prompt. Returns where to split
 * system prompts into two cache blocks (the shared prefix) with the `'shared_prefix'` strategy.
 */
async function warmCaches(crew: CrewParts, run: Run): Promise<number | undefined> {
  const workers = crew.process === 'hierarchical' ? [crew.manager!, ...crew.agents] : crew.agents;
  const texts = workers.map((agent) => agent.systemPrompt(crew.inputs));
  const splitAt =
    crew.cachePreloadStrategy === 'shared_prefix' ? sharedPrefixLength(texts) || undefined : undefined;
  if (!crew.cachePreload || workers.length < 2) return splitAt;
  const agents = workers.map((agent, index) => {
    const { model, modelId } = agent.resolveModel();
    return {
      model,
      modelId,
      system: systemPromptFor(model, texts[index]!, splitAt ? { splitAt } : {}),
      context: { crewId: crew.id, agentId: agent.id, agentRole: agent.role },
    };
  });
  const result = await preloadCaches({
    agents,
    strategy: crew.cachePreloadStrategy,
    emit: (source, event) => run.emit(source, event),
    context: { crewId: crew.id },
  });
  addUsage(crew.probeUsage, result.usage);
  return splitAt;
}

/** The outputs a task builds on: its `context` tasks, else the task right before it. */
function contextOutputs(crew: CrewParts, task: Task, index: number): TaskOutput[] {
  const sources = task.context ?? (index > 0 ? [crew.tasks[index - 1]!] : []);
  return sources
    .map((source) => source.output)
    .filter((output): output is TaskOutput => output !== undefined);
}

async function runTask(
  crew: CrewParts,
  run: Run,
  task: Task,
  index: number,
  splitAt: number | undefined,
  abortSignal: AbortSignal | undefined,
): Promise<void> {
  const agent = workerFor(crew, task);
  const context: EventContext = {
    crewId: crew.id,
    taskId: task.id,
    taskIndex: index,
    ...(task.name ? { taskName: task.name } : {}),
    agentId: agent.id,
    agentRole: agent.role,
  };
  const source: EventSource = { kind: 'task', id: task.id, name: task.label };
  const agentSource: EventSource = { kind: 'agent', id: agent.id, name: agent.role };
  const emit = (eventSource: unknown, event: BaseEvent) => run.emit(eventSource, event);
  // Pending tasks are templated with the inputs of this kickoff; a task that already started keeps
  // the prompt it was given (it is in its saved conversation).
  const description = task.renderDescription(crew.inputs);
  const expectedOutput = task.renderExpectedOutput(crew.inputs);
  task.status = 'running';
  if (!task.startedEmitted) {
    task.startedEmitted = true;
    emit(source, new TaskStartedEvent({ description, source, context }));
  }
  try {
    if (!task.conversation) {
      const recall = await recallSections(description, {
        memories: [crew.memory, agent.memory].filter((memory) => memory !== undefined),
        knowledgeBases: [crew.knowledge, agent.knowledge].filter((knowledge) => knowledge !== undefined),
        emit,
        context,
      });
      const prompt = taskPrompt({
        description,
        expectedOutput,
        context: contextOutputs(crew, task, index),
        recall,
        ...(crew.process === 'hierarchical'
          ? { coworkers: crew.agents.map((coworker) => ({ role: coworker.role, goal: coworker.goal })) }
          : {}),
      });
      const conversation = newConversation();
      conversation.messages.push({ role: 'user', content: prompt });
      task.systemPrompt = agent.systemPrompt(crew.inputs);
      task.conversation = conversation;
      emit(
        agentSource,
        new AgentExecutionStartedEvent({
          role: agent.role,
          taskDescription: description,
          source: agentSource,
          context,
        }),
      );
    }
    const result = await runAgentWork({
      agent,
      run,
      conversation: task.conversation,
      prompt: '',
      inputs: crew.inputs,
      ...(task.systemPrompt !== undefined ? { system: task.systemPrompt } : {}),
      ...(splitAt !== undefined ? { systemSplitAt: splitAt } : {}),
      context,
      outputSchema: task.outputSchema,
      ...(crew.process === 'hierarchical'
        ? { extraTools: [delegationTool({ crew, run, task, context, abortSignal })] }
        : {}),
      abortSignal,
      telemetry: crew.telemetry,
    });
    emit(
      agentSource,
      new AgentExecutionCompletedEvent({
        role: agent.role,
        output: result.output,
        source: agentSource,
        context,
      }),
    );
    // Remembered before the task is marked complete: a resume in between finds the finished
    // conversation, returns its answer without a call, and saving the same item again is a no-op.
    const metadata = { task: task.label, agent: agent.role, crewId: crew.id, taskIndex: index };
    for (const memory of [crew.memory, agent.memory]) {
      if (!memory || result.output.trim() === '') continue;
      memory.bind({ emit, context });
      memory.save(result.output, metadata);
    }
    task.output = new TaskOutput({
      taskId: task.id,
      name: task.name,
      description,
      expectedOutput,
      agentRole: agent.role,
      raw: result.output,
      ...(task.outputSchema ? { structured: result.structured } : {}),
      usage: totalTaskUsage(task),
    });
    task.status = 'completed';
    emit(source, new TaskCompletedEvent({ description, output: result.output, source, context }));
  } catch (error) {
    // Stopped, not failed: its run gave up its lineage head (its process ends on a signal). A failure
    // recorded now could still be checkpointed while the release is in flight, showing a failed task
    // for an interrupt; a resume continues the task from its saved conversation either way.
    if (stoppedByLeaseRelease(error)) throw error;
    task.status = 'failed';
    emit(
      agentSource,
      new AgentExecutionErrorEvent({
        role: agent.role,
        error: describe(error),
        source: agentSource,
        context,
      }),
    );
    emit(source, new TaskFailedEvent({ description, error: describe(error), source, context }));
    throw error;
  }
}

function totalTaskUsage(task: Task): TokenUsage {
  const usage = emptyUsage();
  if (task.conversation) addUsage(usage, task.conversation.usage);
  for (const delegation of Object.values(task.delegations)) addUsage(usage, delegation.usage);
  return usage;
}
