import type { LanguageModelV3 } from '@ai-sdk/provider';
import { CrewlineError, logger } from '@crewline/events';
import type {
  EntitySnapshot,
  JsonObject,
  JsonValue,
  ProviderRegistry,
  SettledValues,
} from '@crewline/runtime-state';
import {
  type AgentData,
  type AgentDefinitionData,
  parseAgentData,
  type ShortTermMemoryData,
  toAgentData,
} from '@crewline/runtime-state/internal';
import { type ModelMessage, NoSuchModelError } from 'ai';
import type { ModelCallSettings } from '../agent-loop/model-step.js';
import { restoreCheckpointSetting, settledCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import {
  restoreConversation,
  type Settle,
  settlerOf,
  storeConversation,
} from '../checkpointing/snapshot-values.js';
import { byContent, StoredForms } from '../checkpointing/stored-forms.js';
import { KnowledgeBase } from '../knowledge/knowledge-base.js';
import { ShortTermMemory } from '../memory/short-term-memory.js';
import { isCustomModelId, modelIdOf, servedPrefixOf } from '../models/model-id.js';
import { servesPrefix } from '../models/model-providers.js';
import { resolveModel } from '../models/resolve-model.js';
import {
  readStoredModelSettings,
  type StoredModelSettings,
  storableCallSettings,
  storableModel,
  storedModelSettingsData,
} from '../models/stored-model.js';
import { type ProjectRegistry, projectRegistry } from '../project-config/project-config.js';
import type { CrewlineTool } from '../tools/define-tool.js';
import { unavailableTool } from '../tools/unavailable-tool.js';
import type { AgentOptions } from './agent-options.js';
import type { AgentParts } from './agent-parts.js';

// The warning about settings a checkpoint cannot hold, last given per agent: said once, not per write.
const unstoredWarnings = new WeakMap<AgentParts, string>();

/**
 * The model settings and call settings of an agent as a checkpoint stores them, and the names of
 * those it cannot store. A model made by a registered provider is rebuilt by that provider, so what
 * only the provider holds (its `fetch`, its headers) is not lost and not reported.
 */
function storableAgentModel(model: {
  llm: AgentParts['llm'];
  modelName: string | undefined;
  modelId: string;
  registry: ProjectRegistry;
  modelSettings: StoredModelSettings | undefined;
  settings: StorableCallSettings | undefined;
}): {
  llmSettings: StoredModelSettings | undefined;
  settings: JsonObject | undefined;
  unstored: string[];
} {
  let llmSettings = model.modelSettings;
  const unstored: string[] = [];
  if (typeof model.llm !== 'string' && model.modelName === undefined) {
    const storable = storableModel(model.llm as LanguageModelV3);
    llmSettings = storable.settings;
    // The registry decides only whether to warn, never what is stored.
    const registry = model.registry;
    const prefix = servedPrefixOf(model.modelId);
    const rebuiltByRegistry =
      registry.models[model.modelId] !== undefined ||
      (prefix !== undefined && registry.modelProviders.some((providers) => servesPrefix(providers, prefix)));
    if (!rebuiltByRegistry) unstored.push(...storable.unstored.map((name) => `model ${name}`));
  }
  if (model.settings) unstored.push(...model.settings.unstored);
  return { llmSettings, settings: model.settings?.settings, unstored };
}

type StorableCallSettings = ReturnType<typeof storableCallSettings>;

function warnUnstored(agent: AgentParts, role: string, unstored: string[]): void {
  if (unstored.length === 0) return;
  const message = `agent "${role}": checkpoints cannot store ${unstored.join(', ')}; a resume or fork from them runs without these — give the model through modelProviders in crewline.config.ts (or in code), and telemetry with the \`telemetry\` option, again when you continue`;
  if (unstoredWarnings.get(agent) === message) return;
  unstoredWarnings.set(agent, message);
  logger.warn('runtime', message);
}

// An agent's definition rarely changes during a run but is stored in every checkpoint: its redacted
// form is kept while every value it is built from reads the same. Call settings (which model calls
// use live) are compared by their stored form, so a temperature changed in place is stored anew; the
// checkpoint setting by its stored form too (settledCheckpointSetting).
const definitionForms = new StoredForms({
  sources: (agent: AgentParts, settle: Settle) =>
    [
      // The same for every read of an agent: only whom a warning was given to.
      agent,
      agent.id,
      agent.role,
      agent.goal,
      agent.backstory,
      agent.llm,
      agent.modelName,
      // The registry that names a model object, compared as one object: the modelId getter's walk
      // of it was most of a kept definition's cost per snapshot. A model registered into it after
      // the agent's first checkpoint is named once the agent's model changes (as before).
      projectRegistry(),
      byContent(agent.modelSettings),
      // A read-only list of tools whose names are read-only: replaced, never changed in place.
      agent.tools,
      agent.maxIterations,
      settledCheckpointSetting(agent.checkpoint, settle),
      agent.settings ? byContent(storableCallSettings(agent.settings)) : undefined,
      agent.knowledge,
    ] as const,
  build: (
    [
      agent,
      id,
      role,
      goal,
      backstory,
      llm,
      modelName,
      registry,
      modelSettings,
      tools,
      maxIterations,
      checkpoint,
      settings,
      knowledge,
    ],
    settle,
  ): AgentDefinitionData => {
    const modelId = modelName ?? modelIdOf(llm, registry.models, registry.modelProviders);
    const model = storableAgentModel({ llm, modelName, modelId, registry, modelSettings, settings });
    warnUnstored(agent, role, model.unstored);
    const llmSettings = storedModelSettingsData(model.llmSettings);
    return {
      id,
      role,
      goal,
      backstory,
      llm: modelId,
      ...(llmSettings ? { llmSettings } : {}),
      tools: tools.map((tool) => tool.name),
      maxIterations,
      checkpoint,
      ...(model.settings ? { settings: model.settings } : {}),
      knowledge: knowledge ? knowledgeData(knowledge, settle) : null,
      memory: null,
    };
  },
});

/** An agent's definition as stored: strings and names only (model id, tool names), never objects or keys. */
export function agentDefinitionData(agent: AgentParts, settle: Settle): AgentDefinitionData {
  const definition = settle(definitionForms.stored(agent, settle, settle));
  // Memory changes as the agent works, so it is added fresh each time.
  return agent.memory ? { ...definition, memory: agent.memory.toJSON() } : definition;
}

const knowledgeCache = new WeakMap<KnowledgeBase, JsonValue>();

/**
 * A knowledge base as stored (an agent's, a crew's). Its sources and chunking are read-only and it
 * is not added to during a run: serialized once per knowledge base.
 */
export function knowledgeData(knowledge: KnowledgeBase, settle: Settle): JsonValue {
  let data = knowledgeCache.get(knowledge);
  if (data === undefined) {
    data = knowledge.toJSON() as unknown as JsonValue;
    knowledgeCache.set(knowledge, data);
  }
  return settle(data);
}

/** Puts the saved memory of an agent back (the progress part of its definition). */
export function applyAgentMemory(agent: AgentParts, data: { memory: ShortTermMemoryData | null }): void {
  if (data.memory !== null) agent.memory = ShortTermMemory.fromJSON(data.memory);
}

/** A standalone agent as a checkpoint entity: its definition and the progress of its kickoff. */
export function snapshotStandaloneAgent(agent: AgentParts, settled?: SettledValues): EntitySnapshot {
  const settle = settlerOf(settled);
  return {
    kind: 'agent',
    id: agent.id,
    name: agent.role,
    data: toAgentData({
      ...agentDefinitionData(agent, settle),
      status: agent.status,
      kickoffStarted: agent.kickoffStarted,
      kickoffMessages: (agent.kickoffMessages ?? null) as JsonValue[] | null,
      conversation: storeConversation(agent.conversation, settle) as AgentData['conversation'],
      recallAdded: agent.recallAdded,
    }),
  };
}

/** Puts a saved standalone kickoff's progress onto an agent. */
export function applyStandaloneAgentSnapshot(agent: AgentParts, snapshot: EntitySnapshot): void {
  const data = parseAgentData(snapshot);
  agent.id = snapshot.id;
  agent.status = data.status;
  agent.kickoffStarted = data.kickoffStarted;
  agent.kickoffMessages =
    data.kickoffMessages === null
      ? undefined
      : (structuredClone(data.kickoffMessages) as unknown as ModelMessage[]);
  agent.conversation = restoreConversation(data.conversation as JsonValue);
  agent.recallAdded = data.recallAdded;
  applyAgentMemory(agent, data);
  // A failed kickoff is continued like an interrupted one: its saved calls are kept.
  if (agent.status === 'failed') agent.status = 'running';
}

/** Names that a rebuild could not find, collected so one error lists everything to register. */
export class MissingParts {
  readonly tools = new Set<string>();
  readonly models = new Set<string>();
  /**
   * Models among {@link models} whose prefix the registered modelProviders serve, which do not make
   * that model (the AI SDK's NoSuchModelError): told as such, not as a prefix to serve (review RK-6).
   */
  readonly unmadeModels = new Set<string>();
  /** Which remaining work needs what is missing: `task 2 "Research" (agent Researcher) needs lookup`. */
  readonly neededBy: string[] = [];

  /** Adds what `other` lacks, as needed by `work`. */
  addNeeded(other: MissingParts, work: string): void {
    if (other.tools.size === 0 && other.models.size === 0) return;
    for (const tool of other.tools) this.tools.add(tool);
    for (const model of other.models) this.models.add(model);
    for (const model of other.unmadeModels) this.unmadeModels.add(model);
    this.neededBy.push(`${work} needs ${[...other.tools, ...other.models].join(', ')}`);
  }

  throwIfAny(what: string): void {
    if (this.tools.size === 0 && this.models.size === 0) return;
    const parts: string[] = [];
    if (this.tools.size > 0)
      parts.push(`tools: { ${[...this.tools].map((name) => `'${name}': yourTool`).join(', ')} }`);
    // Every model can be registered under its id; a prefixed one can also be served by an AI SDK
    // provider registered for its prefix (every model of that provider then), said as the other way.
    // A custom/ id is not: such a provider would rebuild its plain model, not the object written with.
    let providerWay = '';
    let customIds = '';
    if (this.models.size > 0) {
      parts.push(`models: { ${[...this.models].map((id) => `'${id}': yourModel`).join(', ')} }`);
      const prefixed = [...this.models].filter((id) => !isCustomModelId(id));
      const servable = [
        ...new Set(
          prefixed
            .filter((id) => !this.unmadeModels.has(id))
            .map(servedPrefixOf)
            .filter((prefix) => prefix !== undefined),
        ),
      ];
      if (servable.length > 0)
        providerWay = `, or serve every model of a prefix with modelProviders: { ${servable.map((prefix) => `'${prefix}': create…({...})`).join(', ')} }`;
      if (prefixed.length < this.models.size)
        customIds = `. A custom/… id names a model object checkpoints cannot describe (a wrapLanguageModel(...) result, a model object of your own); to store a name instead, register the model in the config's models, call registerProject(config) in the crew's script and give the agent that very model (import it from the config) or its name (llm: '<name>')`;
    }
    const unmade =
      this.unmadeModels.size > 0
        ? `. The modelProviders registered for ${[...this.unmadeModels].map((id) => `'${id}'`).join(', ')} serve ${this.unmadeModels.size === 1 ? 'its' : 'their'} prefix but do not make ${this.unmadeModels.size === 1 ? 'that model' : 'those models'}: add ${this.unmadeModels.size === 1 ? 'it' : 'them'} to that provider (a customProvider's languageModels, or its fallback) or register ${this.unmadeModels.size === 1 ? 'it' : 'them'} under ${this.unmadeModels.size === 1 ? 'its' : 'their'} id`
        : '';
    throw new CrewlineError(
      'runtime',
      'not_rebuildable',
      `${what} cannot be rebuilt from the checkpoint alone: ${[
        this.tools.size > 0 ? `tool(s) ${[...this.tools].join(', ')}` : '',
        this.models.size > 0 ? `model(s) ${[...this.models].join(', ')}` : '',
      ]
        .filter(Boolean)
        .join(
          ' and ',
        )} are not registered${this.neededBy.length > 0 ? ` (${this.neededBy.join('; ')})` : ''}; register them in crewline.config.ts: export default defineConfig({ ${parts.join(', ')} })${providerWay}${customIds}${unmade}`,
      { details: { tools: [...this.tools], models: [...this.models] } },
    );
  }
}

/**
 * Builds an agent from its stored definition. Tools are found by name in the project registry;
 * the model id must be a built-in `provider:model` id or registered. Missing names are collected in
 * `missing` (when given) instead of thrown, so that a crew reports all of them at once.
 */
export async function rebuildAgent<T extends AgentParts>(
  // The class is passed in (Agent.fromLoaded passes itself) so that agent.ts and this module do not
  // import each other.
  agentClass: new (options: AgentOptions) => T,
  data: AgentDefinitionData,
  snapshot?: Pick<EntitySnapshot, 'id'>,
  options: { registry?: ProjectRegistry; missing?: MissingParts; providers?: ProviderRegistry } = {},
): Promise<T> {
  const registry = options.registry ?? projectRegistry();
  const missing = options.missing ?? new MissingParts();
  const tools: CrewlineTool[] = [];
  for (const name of data.tools) {
    const tool = registry.tool(name);
    if (tool) tools.push(tool);
    else {
      missing.tools.add(name);
      // Collecting: the caller decides whether the agent needs it (a finished agent does not).
      if (options.missing) tools.push(unavailableTool(name, data.role));
    }
  }
  const llm = data.llm;
  const modelSettings = readStoredModelSettings(data.llmSettings as JsonValue | undefined);
  const resolveOptions = {
    models: registry.models,
    modelProviders: registry.modelProviders,
    ...(modelSettings ? { settings: modelSettings } : {}),
  };
  let servedByRegistry = false;
  if (llm === '') missing.models.add('(none stored)');
  else if (registry.models[llm] !== undefined) servedByRegistry = true;
  else {
    // The prefix of a custom/<provider id>/<model> id is its provider's (resolveModel builds it so).
    const prefix = servedPrefixOf(llm);
    servedByRegistry =
      prefix !== undefined && registry.modelProviders.some((providers) => servesPrefix(providers, prefix));
    try {
      resolveModel(llm, { ...resolveOptions, env: {} });
    } catch (error) {
      // Only an unknown provider or model makes the agent unrebuildable (modelProviders that serve the
      // prefix but not the model throw the AI SDK's NoSuchModelError); a missing key is checked when it
      // runs, and a provider package that is not installed says what to add.
      if (CrewlineError.hasCode(error, 'provider_unavailable')) throw error;
      if (
        CrewlineError.hasCode(error, 'not_rebuildable') ||
        CrewlineError.hasCode(error, 'invalid_argument') ||
        NoSuchModelError.isInstance(error)
      ) {
        missing.models.add(llm);
        if (NoSuchModelError.isInstance(error)) missing.unmadeModels.add(llm);
        // Not built below: a collecting caller decides whether the agent needs it (a finished one does not).
        servedByRegistry = false;
      }
    }
  }
  if (!options.missing) missing.throwIfAny(`agent "${data.role}"`);
  // Only the generation settings crewline knows are read back: a checkpoint written before they were
  // filtered may hold a half-copied object (a tracer without its methods) that must not reach a call.
  const settings =
    data.settings !== null && typeof data.settings === 'object' && !Array.isArray(data.settings)
      ? (storableCallSettings(data.settings).settings as ModelCallSettings)
      : undefined;
  const agent = new agentClass({
    role: data.role,
    goal: data.goal,
    backstory: data.backstory,
    // The id stays the agent's llm (a registered name resolves through the registry when it runs), so
    // later checkpoints store the same name.
    llm,
    tools,
    maxIterations: data.maxIterations,
    ...(settings ? { settings } : {}),
    checkpoint: await restoreCheckpointSetting(data.checkpoint, options.providers),
    ...(data.memory !== null ? { memory: true } : {}),
  });
  if (data.knowledge !== null) agent.knowledge = KnowledgeBase.fromJSON(data.knowledge);
  applyAgentMemory(agent, data);
  agent.id = snapshot?.id ?? data.id;
  agent.modelSettings = modelSettings;
  if (servedByRegistry) {
    // Registered in the registry given for this restore (maybe not the process-wide one): use the
    // model object now, and keep storing its registered name and settings.
    agent.llm = resolveModel(llm, resolveOptions);
    agent.modelName = llm;
  }
  return agent;
}
