import { randomUUID } from 'node:crypto';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import {
  type BaseEvent,
  CrewlineError,
  keepNamesFromValueRedaction,
  LiteAgentExecutionCompletedEvent,
  LiteAgentExecutionErrorEvent,
  LiteAgentExecutionStartedEvent,
  logger,
  REDACTED,
} from '@crewline/events';
import type {
  CheckpointableEntity,
  CheckpointConfigInput,
  CheckpointSetting,
  EntitySnapshot,
  EntitySummary,
  LoadedCheckpoint,
  SettledValues,
  StoredCheckpoint,
} from '@crewline/runtime-state';
import { parseAgentData } from '@crewline/runtime-state/internal';
import type { LanguageModel, ModelMessage, TelemetrySettings } from 'ai';
import { DEFAULT_MAX_ITERATIONS } from '../agent-loop/agent-loop.js';
import { type Conversation, newConversation, type TokenUsage } from '../agent-loop/conversation.js';
import type { ModelCallSettings } from '../agent-loop/model-step.js';
import { resolveCheckpointChain, validateCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import { stoppedByLeaseRelease } from '../checkpointing/lineage-lease.js';
import { Run } from '../checkpointing/run.js';
import { agentRestart, callsMadeAgain, interruptedTaskWords } from '../crew/interrupted-tasks.js';
import { KnowledgeBase } from '../knowledge/knowledge-base.js';
import { ShortTermMemory } from '../memory/short-term-memory.js';
import { registerModelCredentials } from '../models/model-credentials.js';
import { modelIdOf } from '../models/model-id.js';
import { resolveModel } from '../models/resolve-model.js';
import type { StoredModelSettings } from '../models/stored-model.js';
import { type ProjectRegistry, projectRegistry } from '../project-config/project-config.js';
import { keepEarlierKickoff } from '../restore/earlier-kickoff.js';
import { oneKickoffAtATime } from '../restore/one-kickoff-at-a-time.js';
import {
  type PendingRestore,
  type RestoreSubject,
  rebuildFromCheckpoint,
  restoreAtKickoff,
  restoreFromCheckpoint,
} from '../restore/pending-restore.js';
import { savedInputs } from '../restore/saved-inputs.js';
import { interpolate } from '../templating/interpolate.js';
import type { CrewlineTool } from '../tools/define-tool.js';
import { toolsByName } from '../tools/define-tool.js';
import {
  type AgentKickoffOptions,
  type AgentOptions,
  type AgentRestoreOptions,
  defaultModelId,
} from './agent-options.js';
import { type AgentOutput, createAgentOutput, savedAgentOutput } from './agent-output.js';
import type { AgentParts } from './agent-parts.js';
import { applyStandaloneAgentSnapshot, rebuildAgent, snapshotStandaloneAgent } from './agent-snapshot.js';
import { runAgentWork } from './agent-work.js';
import { recallSections } from './recall.js';

const component = 'runtime';

/**
 * An agent: a role with a goal, a model and tools. It works on tasks inside a crew, or on its own
 * with {@link Agent.kickoff} (checkpointed, resumable and forkable like a crew).
 */
export class Agent implements CheckpointableEntity, AgentParts {
  readonly entityKind = 'agent' as const;
  /**
   * The agent's entity id in checkpoints and events (a restore gives it the saved one). Kicked off
   * again in the run it already ran in, it gets a new one: each kickoff is an entity of its own.
   */
  id: string;
  readonly role: string;
  readonly goal: string;
  readonly backstory: string;
  llm: LanguageModel | string;
  readonly tools: readonly CrewlineTool[];
  readonly maxIterations: number;
  readonly settings: ModelCallSettings | undefined;
  /**
   * AI SDK telemetry for this agent's model calls (`experimental_telemetry`). Never stored in a
   * checkpoint: give it again when resuming or forking (the `telemetry` option of `fromCheckpoint`).
   */
  telemetry: TelemetrySettings | undefined;
  checkpoint: CheckpointSetting;
  /** The agent's own short-term memory (with `memory: true`). */
  memory: ShortTermMemory | undefined;
  /** The agent's knowledge (with `knowledgeSources`). */
  knowledge: KnowledgeBase | undefined;

  // Progress of a standalone kickoff (an agent in a crew keeps its progress on the crew's tasks).
  /** @internal */ conversation: Conversation | undefined;
  /** @internal */ kickoffStarted = false;
  /** @internal */ status: 'pending' | 'running' | 'completed' | 'failed' = 'pending';
  /** @internal */ inputs: Record<string, unknown> = {};
  /** @internal */ kickoffMessages: ModelMessage[] | undefined;
  /** @internal */ recallAdded = false;
  #pendingRestore: PendingRestore | undefined;
  #lastRun: Run | undefined;

  constructor(options: AgentOptions) {
    for (const field of ['role', 'goal', 'backstory'] as const) {
      if (typeof options?.[field] !== 'string') {
        throw new CrewlineError(component, 'invalid_config', `Agent: \`${field}\` must be a string`);
      }
    }
    const maxIterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
    if (!Number.isInteger(maxIterations) || maxIterations < 1) {
      throw new CrewlineError(
        component,
        'invalid_config',
        `Agent "${options.role}": maxIterations must be a whole number of at least 1, got ${String(maxIterations)}`,
      );
    }
    this.id = randomUUID();
    this.role = options.role;
    // What its checkpoint names it by, a restore rebuilds it from and a manager delegates to: no
    // registered credential that is a word of it may rewrite it (review RF-1, RI-3).
    keepNamesFromValueRedaction([this.role]);
    this.goal = options.goal;
    this.backstory = options.backstory;
    this.llm = options.llm ?? defaultModelId();
    this.tools = Object.values(toolsByName(options.tools ?? []));
    this.maxIterations = maxIterations;
    this.settings = options.settings;
    this.telemetry = options.telemetry;
    this.checkpoint = validateCheckpointSetting(options.checkpoint, `Agent "${options.role}" checkpoint`);
    this.memory = options.memory ? new ShortTermMemory() : undefined;
    this.knowledge =
      options.knowledgeSources && options.knowledgeSources.length > 0
        ? new KnowledgeBase({ sources: options.knowledgeSources })
        : undefined;
  }

  get entityId(): string {
    return this.id;
  }

  get entityName(): string {
    return this.role;
  }

  /** @internal The registered name of `llm` when it was rebuilt from a registry (kept in later checkpoints). */
  modelName: string | undefined;

  /**
   * @internal The model settings a checkpoint stored for `llm` when it is an id (its base URL...): the
   * model is rebuilt with them, and later checkpoints store them again.
   */
  modelSettings: StoredModelSettings | undefined;

  /** The model id checkpoints store for this agent's `llm`. */
  get modelId(): string {
    const registry = projectRegistry();
    return this.modelName ?? modelIdOf(this.llm, registry.models, registry.modelProviders);
  }

  /**
   * The model object and its id (ids are resolved through the project registry's models and model
   * providers, then the built-in prefixes).
   */
  resolveModel(): { model: LanguageModelV3; modelId: string } {
    const { models, modelProviders } = projectRegistry();
    const modelId = this.modelName ?? modelIdOf(this.llm, models, modelProviders);
    const model =
      typeof this.llm === 'string'
        ? resolveModel(this.llm, {
            models,
            modelProviders,
            ...(this.modelSettings ? { settings: this.modelSettings } : {}),
          })
        : (this.llm as LanguageModelV3);
    // Before the run writes anything: a key given to the model's provider in code shows nowhere else.
    registerModelCredentials(model);
    return { model, modelId };
  }

  /** The system prompt for this agent with placeholders filled. */
  systemPrompt(inputs: Readonly<Record<string, unknown>>): string {
    const role = interpolate(this.role, inputs, `agent "${this.role}" role`);
    const goal = interpolate(this.goal, inputs, `agent "${this.role}" goal`);
    const backstory = interpolate(this.backstory, inputs, `agent "${this.role}" backstory`);
    return `You are ${role}. ${backstory}\nYour personal goal is: ${goal}`;
  }

  /** The run of the last kickoff (its state holds the lineage and event history). */
  get lastRun(): Run | undefined {
    return this.#lastRun;
  }

  /**
   * The last checkpoint the last kickoff stored, or `undefined` when it stored none: its `reference`
   * (what `restoreFrom` and the CLI take), `id`, `parentId`, `branch`, and `lineageId` (shared by every
   * checkpoint of this run, its resumptions included; a fork gets a new one).
   */
  get lastCheckpoint(): StoredCheckpoint | undefined {
    return this.#lastRun?.state.lastStored;
  }

  /** The branch the next kickoff writes checkpoints on, when it was restored or forked. */
  get checkpointBranch(): string | undefined {
    return this.#pendingRestore?.fork?.branch ?? this.#pendingRestore?.loaded.document.metadata.branch;
  }

  /**
   * Runs the agent on its own. `messages` is a user request (a string) or a conversation. Emits
   * `lite_agent_execution_started/completed` and checkpoints per the agent's `checkpoint` setting.
   * A restored agent continues its saved conversation (no model call whose answer was saved is made
   * again), with the inputs given now in its system prompt; `messages` is then ignored. Only a
   * credential saved as `[REDACTED]` given again while its unfinished conversation holds that text
   * starts it over, from `messages` when given, else from the request it ran on; when that request
   * holds the text too and no `messages` are given, it continues its conversation with a warning
   * (the CLI cannot give messages): pass the request again to start over with the credential. An agent restored at its completed end
   * returns its saved output and emits nothing (no `lite_agent_execution_completed` again), so it
   * writes no checkpoint; forked there ({@link Agent.fork}), it emits `lite_agent_execution_completed`
   * on its new branch.
   */
  async kickoff(messages?: string | ModelMessage[], options: AgentKickoffOptions = {}): Promise<AgentOutput> {
    return oneKickoffAtATime(this, { kind: 'Agent', name: this.role }, () =>
      this.#kickoff(messages, options),
    );
  }

  async #kickoff(
    messages: string | ModelMessage[] | undefined,
    options: AgentKickoffOptions,
  ): Promise<AgentOutput> {
    // A missing API key or model package fails here, before anything is restored or written.
    this.resolveModel();
    // Kicked off again in the run it ran in: that kickoff stays an entity of the run, this is a new one.
    if (keepEarlierKickoff(this, options.bus)) this.id = randomUUID();
    const pending = this.#pendingRestore;
    const decided = await restoreAtKickoff(this.#restoreSubject(), {
      fromCheckpoint: options.fromCheckpoint,
      pending,
      bus: options.bus,
    });
    this.#pendingRestore = undefined;
    this.checkpoint = decided.checkpoint;
    const restore = decided.restore;
    // An agent kicked off inside a restored run (a flow method) takes up the state it had in that
    // run, like a crew (restoreAtKickoff applied it): its saved conversation continues, and
    // `messages` is ignored.
    if (!decided.continuing && this.status !== 'running') this.#resetProgress();
    // Restored from its checkpoint: the inputs it ran with fill its role, goal and backstory again
    // (inputs given now win), as a crew's saved inputs fill its tasks.
    let restartMessages: ModelMessage[] | undefined;
    if (restore) {
      const saved = savedInputs(restore.loaded.document);
      try {
        restartMessages = this.#restartInterrupted(saved, options.inputs, messages);
      } catch (error) {
        // Refused before the run began: a kickoff again (with the request) continues the same checkpoint.
        this.#pendingRestore = pending;
        throw error;
      }
      this.inputs = { ...saved, ...(options.inputs ?? {}) };
    } else if (options.inputs) this.inputs = { ...this.inputs, ...options.inputs };
    if (!this.conversation) {
      // Started over (`#restartInterrupted`): the messages given now, else the request it ran on.
      messages ??= restartMessages;
      if (messages === undefined) {
        throw new CrewlineError(
          component,
          'invalid_argument',
          `Agent "${this.role}".kickoff needs messages: a string or a list of messages`,
        );
      }
      this.kickoffMessages =
        typeof messages === 'string' ? [{ role: 'user', content: messages }] : [...messages];
      this.conversation = newConversation();
      this.conversation.messages.push(...this.kickoffMessages);
    }
    const config = resolveCheckpointChain([this.checkpoint]);
    const bus = options.bus;
    let started = false;
    return Run.execute(
      {
        root: this,
        config,
        inputs: this.inputs,
        ...(restore ? { restored: restore.loaded } : {}),
        ...(restore?.fork ? { fork: restore.fork } : {}),
        ...(bus ? { bus } : {}),
      },
      async (run) => {
        started = true;
        this.#lastRun = run;
        if (run.root !== this) {
          // Kicked off inside another run (a flow method): our own setting applies to our events.
          run.setConfigFor(this.id, this.checkpoint === false ? null : config);
        }
        const source = { kind: 'agent' as const, id: this.id, name: this.role };
        const context = { agentId: this.id, agentRole: this.role };
        // Restored at its completed end: its status is set to completed just as
        // lite_agent_execution_completed is emitted, so that event is in the run's history already.
        // The saved output is given back and nothing is emitted (memory was saved before), so a resume
        // of a finished agent writes no checkpoint that says nothing new (one per resume, pushing older
        // ones out under maxCheckpoints). An agent stopped after its final answer but before that event
        // is still running, and ends below as any other, without a model call.
        if (this.status === 'completed' && this.conversation?.finished) {
          const saved = savedAgentOutput(this.role, this.conversation, options.outputSchema);
          // A fork (Agent.fork) says its end again: that is the first checkpoint of its branch, which
          // names the checkpoint it was forked from.
          if (restore?.fork !== undefined && run.root === this) {
            run.emit(
              source,
              new LiteAgentExecutionCompletedEvent({ role: this.role, output: saved.raw, source, context }),
            );
          }
          return saved;
        }
        if (!this.kickoffStarted) {
          this.kickoffStarted = true;
          this.status = 'running';
          run.emit(
            source,
            new LiteAgentExecutionStartedEvent({
              role: this.role,
              messages: this.kickoffMessages ?? [],
              source,
              context,
            }),
          );
        }
        try {
          const emit = (eventSource: unknown, event: BaseEvent) => run.emit(eventSource, event);
          const conversation = this.conversation!;
          if (conversation.llmCalls === 0 && !this.recallAdded && (this.memory || this.knowledge)) {
            // Added once, before the first call: a resumed conversation already holds it.
            const query = requestText(conversation.messages);
            const sections = await recallSections(query, {
              memories: this.memory ? [this.memory] : [],
              knowledgeBases: this.knowledge ? [this.knowledge] : [],
              emit,
              context,
            });
            if (sections.length > 0)
              conversation.messages.push({ role: 'user', content: sections.join('\n\n') });
            this.recallAdded = true;
          }
          const result = await runAgentWork({
            agent: this,
            run,
            conversation,
            prompt: '',
            inputs: this.inputs,
            context,
            outputSchema: options.outputSchema,
            abortSignal: options.abortSignal,
          });
          if (this.memory) {
            this.memory.bind({ emit, context });
            this.memory.save(result.output, { task: 'kickoff', agent: this.role });
          }
          this.status = 'completed';
          run.emit(
            source,
            new LiteAgentExecutionCompletedEvent({ role: this.role, output: result.output, source, context }),
          );
          return createAgentOutput(this.role, result, this.conversation!);
        } catch (error) {
          // Stopped as its process ends on a signal, not failed: a resume continues the conversation.
          if (stoppedByLeaseRelease(error)) throw error;
          this.status = 'failed';
          run.emit(
            source,
            new LiteAgentExecutionErrorEvent({
              role: this.role,
              error: error instanceof Error ? error.message : String(error),
              source,
              context,
            }),
          );
          throw error;
        }
      },
    ).catch((error: unknown) => {
      // Refused before the run began: a kickoff again continues the same checkpoint (see Crew).
      if (!started) this.#pendingRestore = pending;
      throw error;
    });
  }

  /** What the restore path needs of this agent. */
  #restoreSubject(): RestoreSubject {
    return {
      kind: 'agent',
      names: [this.role],
      anyName: true,
      checkpoint: this.checkpoint,
      owner: `Agent "${this.role}" checkpoint`,
      apply: (snapshot) => applyStandaloneAgentSnapshot(this, snapshot),
    };
  }

  /**
   * Starts an interrupted kickoff over only for a credential saved as `[REDACTED]` given again while
   * its unfinished conversation holds that text, which continuing would send the model (review RC-6).
   * Not for a changed input (review RG-1): its system prompt is built from the inputs at each call and
   * its request never from them, so continuing already uses the new ones and no saved call is made
   * again (SPEC §3); a finished conversation hands its saved answer back without a call. Warns in the
   * crew's words, with the calls made again, and returns the request to start over from (the one it
   * ran on, unless `messages` are given: they win); `undefined` when it continues.
   */
  #restartInterrupted(
    saved: Readonly<Record<string, unknown>>,
    inputs: Readonly<Record<string, unknown>> | undefined,
    messages: string | ModelMessage[] | undefined,
  ): ModelMessage[] | undefined {
    const conversation = this.conversation;
    const request = this.kickoffMessages;
    const rule = agentRestart(saved, inputs, {
      completed: this.status === 'completed',
      conversation,
      request,
      messagesGiven: messages !== undefined,
    });
    if (rule === undefined || conversation === undefined) return undefined;
    // The saved request took the credential in (review RG-3): started over from it, the model would be
    // sent the marker all the same. Not refused (review RJ-1): the CLI, the TUI and the worker continue
    // with no messages to give, so a refusal left such a checkpoint neither resumable nor forkable.
    // It continues as it did before the restart rule, its system prompt carrying the credential.
    if (rule === 'request-holds-redacted') {
      logger.warn(
        component,
        `Agent "${this.role}" kickoff: its conversation was interrupted and holds a credential as ${REDACTED}, and so does the request it ran on, so it continues that conversation (its system prompt holds the credential given again) rather than start over from the same text; to start over with the credential, pass the request again: kickoff(messages, { inputs, fromCheckpoint })`,
      );
      return undefined;
    }
    logger.warn(
      component,
      `Agent "${this.role}" kickoff: its conversation was interrupted; ${interruptedTaskWords.restart['credential-given-again'].warning}${callsMadeAgain(conversation.llmCalls)}`,
    );
    // Still the kickoff it was: no new lite_agent_execution_started (SPEC: none on resume, review RG-5).
    this.conversation = undefined;
    this.kickoffMessages = undefined;
    this.recallAdded = false;
    return request;
  }

  #resetProgress(): void {
    this.conversation = undefined;
    this.kickoffStarted = false;
    this.status = 'pending';
    this.kickoffMessages = undefined;
    this.recallAdded = false;
  }

  /** Usage of the standalone conversation so far. */
  get usage(): TokenUsage | undefined {
    return this.conversation?.usage;
  }

  snapshotEntity(settled?: SettledValues): EntitySnapshot {
    return snapshotStandaloneAgent(this, settled);
  }

  summarizeEntity(): EntitySummary {
    return {
      kind: 'agent',
      id: this.id,
      name: this.role,
      status: this.status,
      completed: this.status === 'completed' ? 1 : 0,
      total: 1,
    };
  }

  /**
   * Rebuilds the standalone agent saved in a checkpoint, ready to continue with `kickoff()`. Models
   * given as `provider:model` ids and registered tools are found by name (register custom ones in
   * `crewline.config.ts`).
   */
  static async fromCheckpoint(
    config: CheckpointConfigInput,
    options: AgentRestoreOptions = {},
  ): Promise<Agent> {
    return restoreFromCheckpoint(config, options, (loaded) =>
      Agent.fromLoaded(loaded, config, restoreParts(options)),
    );
  }

  /** Like {@link fromCheckpoint}, on a new branch and lineage (`branch` generated when omitted). */
  static async fork(
    config: CheckpointConfigInput,
    options: AgentRestoreOptions & { branch?: string } = {},
  ): Promise<Agent> {
    return restoreFromCheckpoint(config, options, (loaded) =>
      Agent.fromLoaded(loaded, config, {
        fork: options.branch === undefined ? {} : { branch: options.branch },
        ...restoreParts(options),
      }),
    );
  }

  /** @internal Rebuilds from an already loaded checkpoint (continueFromCheckpoint uses it). */
  static async fromLoaded(
    loaded: LoadedCheckpoint,
    config: CheckpointConfigInput = {},
    options: { fork?: { branch?: string }; registry?: ProjectRegistry; telemetry?: TelemetrySettings } = {},
  ): Promise<Agent> {
    const { entity: agent, pending } = await rebuildFromCheckpoint(
      loaded,
      config,
      { kind: 'agent' },
      async (snapshot) => {
        const rebuilt = await rebuildAgent(Agent, parseAgentData(snapshot), snapshot, {
          ...(options.registry ? { registry: options.registry } : {}),
          providers: loaded.providers,
        });
        return { entity: rebuilt, apply: (saved) => applyStandaloneAgentSnapshot(rebuilt, saved) };
      },
      options.fork,
    );
    if (options.telemetry) agent.telemetry = options.telemetry;
    agent.#pendingRestore = pending;
    return agent;
  }
}

function restoreParts(options: AgentRestoreOptions): {
  registry?: ProjectRegistry;
  telemetry?: TelemetrySettings;
} {
  return {
    ...(options.registry ? { registry: options.registry } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  };
}

/** Text of the user messages of a conversation: what memory and knowledge are searched with. */
function requestText(messages: readonly ModelMessage[]): string {
  return messages
    .filter((message) => message.role === 'user')
    .map((message) =>
      typeof message.content === 'string'
        ? message.content
        : message.content.map((part) => (part.type === 'text' ? part.text : '')).join(' '),
    )
    .join('\n');
}
