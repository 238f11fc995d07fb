// The crew of the crash trials, defined the same way in every process: 3 agents, 4 tasks, one tool
// call per task (so 8 model calls and about 40 events, each a checkpoint on '*'), the offline model.
import { Agent, Crew, defineTool, type LanguageModelObject, registerProject, Task } from '@crewline/runtime';
import { type OfflineModel, offlineModel } from '@crewline/runtime/testing';
import type { CheckpointConfigInput } from '@crewline/runtime-state';
import { runtimeZod } from './runtime-zod.js';

/** The name the model is registered under, so a crew rebuilt from a checkpoint alone finds it. */
export const CRASH_MODEL_NAME = 'crash-model';

/** The kickoff inputs of every run. */
export const crashInputs = { topic: 'tidal energy' };

const z = await runtimeZod();

/** The one tool; the model is scripted to call it once at the start of each task. */
export const notesTool = defineTool({
  name: 'notes',
  description: 'Looks a subject up in the team notes',
  inputSchema: z.object({ subject: z.string() }),
  execute: (input) => `notes about ${(input as { subject: string }).subject}: three facts and one caveat`,
});

/** What the model was asked: the prompt exactly as the provider received it. */
export type ModelRequest = Parameters<OfflineModel['doGenerate']>[0]['prompt'];

export interface CrashModelOptions {
  /** Simulated latency of each call, in milliseconds. */
  latencyMs: number;
  /** Called with each request before the model answers it (the call log). */
  onRequest: (prompt: ModelRequest) => void;
  /**
   * Called with each request the moment its answer arrives, before the runtime receives it: the
   * earliest point at which a user has paid for the call.
   */
  onCompletion?: (prompt: ModelRequest) => void;
}

/**
 * The deterministic offline model (one tool call at the start of each conversation, then the answer),
 * wrapped so that every request is reported before it is answered, and every answer as it arrives.
 */
export function crashModel(options: CrashModelOptions): LanguageModelObject {
  const inner = offlineModel({
    name: 'crash',
    latencyMs: options.latencyMs,
    script: (call) =>
      call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
        ? { toolName: 'notes', input: { subject: 'the task' } }
        : undefined,
  });
  return {
    specificationVersion: inner.specificationVersion,
    provider: inner.provider,
    modelId: inner.modelId,
    supportedUrls: inner.supportedUrls,
    doGenerate: async (callOptions) => {
      options.onRequest(callOptions.prompt);
      const result = await inner.doGenerate(callOptions);
      options.onCompletion?.(callOptions.prompt);
      return result;
    },
    // The runtime calls doGenerate; a stream is reported too, when it is handed over: the offline
    // model waits its latency first and only replays an answer it already holds.
    doStream: async (callOptions) => {
      options.onRequest(callOptions.prompt);
      const result = await inner.doStream(callOptions);
      options.onCompletion?.(callOptions.prompt);
      return result;
    },
  };
}

/** Registers the model and the tool by name, as a project's `crewline.config.ts` would. */
export function registerCrashProject(model: LanguageModelObject): void {
  registerProject({ models: { [CRASH_MODEL_NAME]: model }, tools: { notes: notesTool } });
}

/** Three agents, four tasks, each agent with the notes tool. */
export function crashCrew(model: LanguageModelObject, checkpoint: CheckpointConfigInput | false): Crew {
  const agents = ['Researcher', 'Writer', 'Reviewer'].map(
    (role) =>
      new Agent({
        role,
        goal: `Do the ${role.toLowerCase()} work on {topic}`,
        backstory: 'Experienced',
        llm: model,
        tools: [notesTool],
      }),
  );
  const steps = ['Gather sources', 'Draft the findings', 'Check the draft', 'Write the final summary'];
  const tasks = steps.map(
    (step, index) =>
      new Task({
        name: `step-${index + 1}`,
        description: `${step} about {topic}, building on the previous step`,
        expectedOutput: 'a few paragraphs of notes',
        agent: agents[index % agents.length]!,
      }),
  );
  return new Crew({ name: 'crash-crew', agents, tasks, checkpoint });
}
