import { randomUUID } from 'node:crypto';
import { CrewlineError, keepNamesFromValueRedaction, logger } from '@crewline/events';
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
import { shownCrewStatus } from '@crewline/runtime-state/internal';
import type { TelemetrySettings } from 'ai';
import { Agent } from '../agent/agent.js';
import { emptyUsage, type TokenUsage } from '../agent-loop/conversation.js';
import type { CachePreloadStrategy } from '../cache-preload/preload-caches.js';
import {
  ownCheckpointEntry,
  resolveCheckpointChain,
  validateCheckpointSetting,
} from '../checkpointing/checkpoint-setting.js';
import { Run } from '../checkpointing/run.js';
import { runValueCodec } from '../checkpointing/run-value-codec.js';
import { KnowledgeBase } from '../knowledge/knowledge-base.js';
import { ShortTermMemory } from '../memory/short-term-memory.js';
import type { ProjectRegistry } from '../project-config/project-config.js';
import { keepEarlierKickoff } from '../restore/earlier-kickoff.js';
import { oneKickoffAtATime } from '../restore/one-kickoff-at-a-time.js';
import {
  type PendingRestore,
  type RestoreSubject,
  rebuildFromCheckpoint,
  restoreAtKickoff,
  restoreFromCheckpoint,
} from '../restore/pending-restore.js';
import type { Task } from '../task/task.js';
import { executeCrew } from './crew-execution.js';
import type { CrewKickoffOptions, CrewOptions, CrewProcess, CrewRestoreOptions } from './crew-options.js';
import type { CrewOutput } from './crew-output.js';
import type { CrewParts, CrewStatus } from './crew-parts.js';
import { refuseFlowCheckpoint } from './crew-restore-source.js';
import { applyCrewSnapshot, rebuildCrew, snapshotCrew } from './crew-snapshot.js';
import { restartInterruptedTasks } from './interrupted-tasks.js';
import { setTaskOutputOnCrew } from './task-output-edit.js';

const component = 'runtime';

export type { CrewStatus } from './crew-parts.js';

/**
 * A team of agents working through tasks. Checkpoints while it runs (per its `checkpoint` setting);
 * a checkpoint can be resumed (`kickoff({ fromCheckpoint })`, {@link Crew.fromCheckpoint}) or forked
 * ({@link Crew.fork}) — completed tasks are skipped and an interrupted task continues from its saved
 * conversation, so no model call whose answer was saved is made again.
 */
export class Crew implements CheckpointableEntity, CrewParts {
  readonly entityKind = 'crew' as const;
  /**
   * The crew's entity id in checkpoints and events (a restore gives it the saved one). Kicked off
   * again in the run it already ran in, it gets a new one: each kickoff is an entity of its own.
   */
  id: string;
  readonly name: string;
  readonly agents: Agent[];
  readonly tasks: Task[];
  readonly process: CrewProcess;
  readonly manager: Agent | undefined;
  /** Whether the manager was made from `managerLlm` (rather than given). */
  readonly managerGenerated: boolean;
  readonly memoryEnabled: boolean;
  memory: ShortTermMemory | undefined;
  knowledge: KnowledgeBase | undefined;
  checkpoint: CheckpointSetting;
  readonly cachePreload: boolean;
  readonly cachePreloadStrategy: CachePreloadStrategy;
  readonly restoreKey: string | undefined;
  /** AI SDK telemetry for the model calls of agents without their own; never stored in a checkpoint. */
  telemetry: TelemetrySettings | undefined;

  /** @internal */ status: CrewStatus = 'pending';
  /** @internal */ kickoffStarted = false;
  /** @internal */ inputs: Record<string, unknown> = {};
  /** @internal Tokens spent on cache preload probes. */ probeUsage: TokenUsage = emptyUsage();
  /** @internal See {@link CrewParts.valueRegistry}. */ valueRegistry: ProjectRegistry | undefined;
  #pendingRestore: PendingRestore | undefined;
  #lastRun: Run | undefined;
  /** Set by an edit: the next kickoff continues this crew's progress instead of starting over. */
  #continueNext = false;

  constructor(options: CrewOptions) {
    if (!options || !Array.isArray(options.tasks) || options.tasks.length === 0) {
      throw new CrewlineError(
        component,
        'invalid_config',
        'Crew: `tasks` must be a non-empty list of Task objects',
      );
    }
    this.id = randomUUID();
    this.name = options.name ?? 'crew';
    this.process = options.process ?? 'sequential';
    if (this.process !== 'sequential' && this.process !== 'hierarchical') {
      throw new CrewlineError(
        component,
        'invalid_config',
        `Crew "${this.name}": process must be 'sequential' or 'hierarchical', got ${JSON.stringify(options.process)}`,
      );
    }
    this.tasks = [...options.tasks];
    this.agents = [...(options.agents ?? [])];
    for (const task of this.tasks) {
      if (task.agent && !this.agents.includes(task.agent)) this.agents.push(task.agent);
    }
    validateTasks(this.name, this.tasks, this.process);
    if (this.process === 'hierarchical') {
      if (!options.manager && options.managerLlm === undefined) {
        throw new CrewlineError(
          component,
          'invalid_config',
          `Crew "${this.name}": a hierarchical crew needs \`manager\` (an Agent) or \`managerLlm\` (a model or 'provider:model' id)`,
        );
      }
      const roles = new Set<string>();
      for (const agent of this.agents) {
        const key = agent.role.trim().toLowerCase();
        if (roles.has(key)) {
          throw new CrewlineError(
            component,
            'invalid_config',
            `Crew "${this.name}": two agents have the role "${agent.role}"; a manager delegates by role, so give each agent a unique role`,
          );
        }
        roles.add(key);
      }
    }
    this.managerGenerated = this.process === 'hierarchical' && !options.manager;
    this.manager =
      this.process !== 'hierarchical'
        ? undefined
        : (options.manager ??
          new Agent({
            role: 'Crew Manager',
            goal: 'Get every task done well by giving the work to the right coworker and checking the result.',
            backstory: 'You are an experienced manager who knows the strengths of each coworker.',
            ...(options.managerLlm !== undefined ? { llm: options.managerLlm } : {}),
          }));
    // The name a checkpoint stores and a restore finds the crew by: no registered credential that is a
    // word of it may rewrite it (review RF-1; each Agent keeps its own role).
    keepNamesFromValueRedaction([this.name]);
    this.memoryEnabled = options.memory ?? false;
    this.memory = this.memoryEnabled ? new ShortTermMemory() : undefined;
    this.knowledge =
      options.knowledgeSources && options.knowledgeSources.length > 0
        ? new KnowledgeBase({ sources: options.knowledgeSources })
        : undefined;
    this.checkpoint = validateCheckpointSetting(options.checkpoint, `Crew "${this.name}" checkpoint`);
    this.cachePreload = options.cachePreload ?? false;
    this.cachePreloadStrategy = options.cachePreloadStrategy ?? 'parallel';
    this.restoreKey = options.restoreKey;
    this.telemetry = options.telemetry;
  }

  get entityId(): string {
    return this.id;
  }

  get entityName(): string {
    return this.name;
  }

  /** The run of the last kickoff: its state holds the lineage (branch, last checkpoint) and events. */
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

  /** The branch the next kickoff writes on, when this crew was restored or forked. */
  get checkpointBranch(): string | undefined {
    return this.#pendingRestore?.fork?.branch ?? this.#pendingRestore?.loaded.document.metadata.branch;
  }

  /**
   * Runs the crew. With `fromCheckpoint.restoreFrom`, continues the saved run instead: completed
   * tasks are skipped (their saved outputs feed later tasks), the interrupted task continues from its
   * saved conversation (it starts over when `inputs` change any saved input: its prompts hold the old
   * ones; a credential saved as `[REDACTED]` given again is no change, but starts it over when the
   * conversation it would continue holds that text), and no `crew_kickoff_started` is emitted again.
   * A crew restored at its completed end returns its saved output and emits nothing (no
   * `crew_kickoff_completed` again), so it writes no checkpoint; forked there ({@link Crew.fork}), it
   * emits `crew_kickoff_completed` on its new branch.
   */
  async kickoff(options: CrewKickoffOptions = {}): Promise<CrewOutput> {
    return oneKickoffAtATime(this, { kind: 'Crew', name: this.name }, () => this.#kickoff(options));
  }

  async #kickoff(options: CrewKickoffOptions): Promise<CrewOutput> {
    const bus = options.bus;
    // Kicked off again in the run it ran in: that kickoff stays an entity of the run, this is a new one.
    if (keepEarlierKickoff(this, bus)) this.id = randomUUID();
    const pending = this.#pendingRestore;
    const continueNext = this.#continueNext;
    const decided = await restoreAtKickoff(this.#restoreSubject(), {
      fromCheckpoint: options.fromCheckpoint,
      pending,
      bus,
    });
    this.#pendingRestore = undefined;
    this.checkpoint = decided.checkpoint;
    const restore = decided.restore;
    let restored = decided.continuing;
    if (this.#continueNext) restored = true;
    this.#continueNext = false;
    if (!restored) this.resetProgress();
    else restartInterruptedTasks(`Crew "${this.name}" kickoff`, this.tasks, this.inputs, options.inputs);
    this.inputs = restored ? { ...this.inputs, ...(options.inputs ?? {}) } : { ...(options.inputs ?? {}) };
    try {
      this.#resolveModelsOfPendingWork();
    } catch (error) {
      // Nothing ran: a kickoff again (the key set) continues what this one would have.
      this.#pendingRestore = pending;
      this.#continueNext = continueNext;
      throw error;
    }
    const config = resolveCheckpointChain([this.checkpoint]);
    const nothingToRun = this.tasks.every((task) => task.status === 'completed');
    let started = false;
    const output = await Run.execute(
      {
        root: this,
        config,
        inputs: this.inputs,
        ...(restore ? { restored: restore.loaded } : {}),
        ...(restore?.fork ? { fork: restore.fork } : {}),
        ...(bus ? { bus } : {}),
        valueCodec: runValueCodec(this.valueRegistry),
      },
      async (run) => {
        started = true;
        this.#lastRun = run;
        if (run.root !== this) {
          const own = ownCheckpointEntry(this.checkpoint);
          if (own !== undefined) run.setConfigFor(this.id, own);
        }
        for (const agent of [...this.agents, ...(this.manager ? [this.manager] : [])]) {
          const own = ownCheckpointEntry(agent.checkpoint);
          if (own !== undefined) run.setConfigFor(agent.id, own);
        }
        return executeCrew(this, run, options.abortSignal, restore?.fork !== undefined && run.root === this);
      },
    ).catch((error: unknown) => {
      // Refused before the run began (an input stored redacted not passed again, the run held by
      // another process): nothing ran, so a kickoff again continues the same checkpoint, as the
      // refusal says, rather than starting the crew over and paying again for its finished tasks.
      if (!started) {
        this.#pendingRestore = pending;
        this.#continueNext = continueNext;
      }
      throw error;
    });
    if (
      nothingToRun &&
      config !== undefined &&
      restore?.fork !== undefined &&
      this.#lastRun?.root === this &&
      this.lastCheckpoint === undefined
    ) {
      logger.warn(
        component,
        `Crew "${this.name}": the fork ran no task, so it wrote no checkpoint and branch "${restore.fork.branch}" was not made (every task was completed; an edit of the last task changes no task after it, and is kept only in memory): edit an earlier task's output with setTaskOutput to run the tasks after it again, or add 'crew_kickoff_completed' to onEvents to store the fork's end`,
      );
    }
    return output;
  }

  /**
   * Resolves the model of every agent that has work left (a pending task's agent; in a hierarchical
   * crew, the manager and every coworker it may delegate to), so that a missing API key or model
   * package fails the kickoff before the run writes its first checkpoint, not at the first model call
   * after it has checkpointed (and, in a flow, after earlier crews were paid for).
   */
  #resolveModelsOfPendingWork(): void {
    const pending = this.tasks.filter((task) => task.status !== 'completed');
    if (pending.length === 0) return;
    const agents = new Set(
      this.manager
        ? [this.manager, ...this.agents]
        : pending.flatMap((task) => (task.agent ? [task.agent] : [])),
    );
    for (const agent of agents) agent.resolveModel();
  }

  /** What the restore path needs of this crew. */
  #restoreSubject(): RestoreSubject {
    return {
      kind: 'crew',
      names: [this.name],
      // A crew renamed since (or made without a name) still takes the checkpoint's crew.
      anyName: true,
      checkpoint: this.checkpoint,
      owner: `Crew "${this.name}" checkpoint`,
      restoreKey: this.restoreKey,
      apply: (snapshot) => applyCrewSnapshot(this, snapshot),
    };
  }

  /** Forgets all progress (a fresh kickoff of a crew that ran before). */
  resetProgress(): void {
    for (const task of this.tasks) task.resetProgress();
    this.status = 'pending';
    this.kickoffStarted = false;
    this.probeUsage = emptyUsage();
    if (this.memory) this.memory.clear();
  }

  /**
   * Replaces a task's output (by index or Task) before resuming or forking, and invalidates every
   * later task so that they run again against the edited context. The next kickoff continues from
   * there (a restored or forked crew on its checkpoint's lineage). With an `outputSchema`, `raw` must
   * be JSON that the schema accepts.
   */
  setTaskOutput(task: number | Task, raw: string): void {
    setTaskOutputOnCrew(this, task, raw);
    this.#continueNext = true;
  }

  snapshotEntity(settled?: SettledValues): EntitySnapshot {
    return snapshotCrew(this, settled);
  }

  summarizeEntity(): EntitySummary {
    // Counted, not filtered into a list: this runs on every checkpoint.
    let completed = 0;
    for (const task of this.tasks) if (task.status === 'completed') completed += 1;
    return {
      kind: 'crew',
      id: this.id,
      name: this.name,
      // Resuming a crew shown as completed only reports its result.
      status: shownCrewStatus(this.status, completed, this.tasks.length),
      completed,
      total: this.tasks.length,
    };
  }

  /**
   * Rebuilds the crew saved in a checkpoint, ready to continue with `kickoff()`. Declarative crews
   * (`provider:model` ids, registered tools) need nothing else; custom tools and models are found in
   * the project registry (`crewline.config.ts`), or a `not_rebuildable` error names what to register.
   */
  static async fromCheckpoint(
    config: CheckpointConfigInput,
    options: CrewRestoreOptions = {},
  ): Promise<Crew> {
    return restoreFromCheckpoint(config, options, (loaded) => {
      refuseFlowCheckpoint(loaded, 'fromCheckpoint');
      return Crew.fromLoaded(loaded, config, {
        ...(options.registry ? { registry: options.registry } : {}),
        ...(options.telemetry ? { telemetry: options.telemetry } : {}),
      });
    });
  }

  /**
   * Like {@link fromCheckpoint}, on a new lineage and branch (generated when omitted). The first
   * checkpoint of the fork names the restored checkpoint as its parent; the original branch is never
   * written to.
   */
  static async fork(
    config: CheckpointConfigInput,
    options: CrewRestoreOptions & { branch?: string } = {},
  ): Promise<Crew> {
    return restoreFromCheckpoint(config, options, (loaded) => {
      refuseFlowCheckpoint(loaded, 'fork');
      return Crew.fromLoaded(loaded, config, {
        fork: options.branch === undefined ? {} : { branch: options.branch },
        ...(options.registry ? { registry: options.registry } : {}),
        ...(options.telemetry ? { telemetry: options.telemetry } : {}),
      });
    });
  }

  /** @internal Rebuilds from an already loaded (possibly edited) checkpoint. */
  static async fromLoaded(
    loaded: LoadedCheckpoint,
    config: CheckpointConfigInput = {},
    options: {
      fork?: { branch?: string };
      registry?: ProjectRegistry;
      name?: string;
      telemetry?: TelemetrySettings;
    } = {},
  ): Promise<Crew> {
    const { entity: crew, pending } = await rebuildFromCheckpoint(
      loaded,
      config,
      { kind: 'crew', ...(options.name !== undefined ? { names: [options.name] } : {}), anyName: true },
      async (snapshot) => {
        const rebuilt = await rebuildCrew(Crew, snapshot, options.registry, loaded.providers);
        // Before the snapshot is applied: its values are decoded with the classes of the registry given.
        rebuilt.valueRegistry = options.registry;
        return { entity: rebuilt, apply: (saved) => applyCrewSnapshot(rebuilt, saved) };
      },
      options.fork,
    );
    crew.telemetry = options.telemetry;
    crew.#pendingRestore = pending;
    return crew;
  }
}

function validateTasks(crewName: string, tasks: readonly Task[], process: CrewProcess): void {
  const seen = new Set<Task>();
  tasks.forEach((task, index) => {
    if (seen.has(task)) {
      throw new CrewlineError(
        component,
        'invalid_config',
        `Crew "${crewName}": task ${index} ("${task.label}") appears twice; create a new Task for each step`,
      );
    }
    if (process === 'sequential' && !task.agent) {
      throw new CrewlineError(
        component,
        'invalid_config',
        `Crew "${crewName}": task ${index} ("${task.label}") has no agent; give it \`agent\` or use process: 'hierarchical'`,
      );
    }
    for (const earlier of task.context ?? []) {
      if (!seen.has(earlier)) {
        throw new CrewlineError(
          component,
          'invalid_config',
          `Crew "${crewName}": task ${index} ("${task.label}") uses as context a task that does not come before it in this crew ("${earlier.label}")`,
        );
      }
    }
    seen.add(task);
  });
}
