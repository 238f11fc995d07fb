import type { ModelPrices, ProviderEntry, ValueClassEntry } from '@crewline/runtime-state';
import { registerModelCredentials, registerProviderCredentials } from '../models/model-credentials.js';
import { type ModelProviders, validateModelProviders } from '../models/model-providers.js';
import type { RegisteredModel } from '../models/resolve-model.js';
import type { CrewlineTool } from '../tools/define-tool.js';
import { checkProjectConfig } from './project-config-schema.js';

/**
 * A class that can be rebuilt from a checkpoint by its registered name: Flow subclasses. Kept
 * structural so that the registry does not depend on the flow module.
 */
export type FlowClass = abstract new (...args: any[]) => object;

/**
 * What a project registers in `crewline.config.ts` so that code-defined parts of a run can be found
 * again when a checkpoint is resumed in a process that did not create it (the CLI, another worker).
 * Checkpoints store only these names, never module paths.
 */
export interface ProjectConfig {
  /** Custom tools by the name checkpoints store (the tool's `name`). Default: none. */
  tools?: Record<string, CrewlineTool>;
  /**
   * Models by id: a model object or a factory. An agent whose `llm` is one of these objects is stored
   * under this id. Default: none (`provider:model` ids are built in).
   */
  models?: Record<string, RegisteredModel>;
  /**
   * AI SDK providers by the prefix of the model ids they serve, or an AI SDK
   * `createProviderRegistry(...)`: `{ google: createGoogleGenerativeAI(), myproxy: createOpenAI({
   * baseURL, name: 'myproxy' }) }`. Any `prefix:model` they serve is rebuilt with them on restore, and
   * a model they made is stored under their prefix. They win over the built-in prefixes (`openai`,
   * `anthropic`, ...). Default: none.
   */
  modelProviders?: ModelProviders;
  /**
   * What your models cost, in US dollars per million tokens, by the model id checkpoints store:
   * `{ 'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10, cachedInputPerMillion: 1.25 } }`.
   * `crewline checkpoint info`, the explorer and `crewline runs show` turn a run's tokens into a cost
   * with them; crewline keeps no prices of its own, so a model missing here has an unknown cost.
   * Offline models cost 0. Default: none.
   */
  modelPrices?: ModelPrices;
  /** Flow subclasses by the name their checkpoints store. Default: none. */
  flows?: Record<string, FlowClass>;
  /**
   * Checkpoint providers beyond crewline's JSON, SQLite and Postgres: registry entries (see the
   * provider registry in the @crewline/runtime-state README). The CLI opens the locations they claim
   * and a resume rebuilds the provider a checkpoint stored; in code, pass
   * `providerRegistry(config.providers)` as a checkpoint config's `providers`. Default: none.
   */
  providers?: readonly ProviderEntry[];
  /**
   * Classes whose instances in flow state, method outputs and task outputs are restored as instances
   * of them (`classes: [Money]`, or `{ class: Money, name: 'billing.Money' }` to store another name
   * than the class's `name`). An instance of a class not listed is restored as a plain object, and a
   * warning names its class the first time one is stored. Default: none.
   */
  classes?: readonly ValueClassEntry[];
}

/** Identity helper that gives `crewline.config.ts` type checking: `export default defineConfig({...})`. */
export function defineConfig(config: ProjectConfig): ProjectConfig {
  return config;
}

/** The parts of a project registered so far; restore looks names up here. */
export class ProjectRegistry {
  readonly tools = new Map<string, CrewlineTool>();
  readonly models: Record<string, RegisteredModel> = Object.create(null);
  /** Model providers in the order registered (a later one wins for a prefix both serve). */
  readonly modelProviders: ModelProviders[] = [];
  readonly flows = new Map<string, FlowClass>();
  /** Classes restored as instances (`classes` of the configs registered), in the order registered. */
  readonly classes: ValueClassEntry[] = [];

  /** Adds everything `config` names; a later registration of the same name wins. */
  register(config: ProjectConfig): this {
    checkProjectConfig(config, 'project config');
    for (const [name, tool] of Object.entries(config.tools ?? {})) {
      this.tools.set(name, tool);
      if (tool.name !== name) this.tools.set(tool.name, tool);
    }
    for (const [id, model] of Object.entries(config.models ?? {})) {
      this.models[id] = model;
      if (typeof model === 'object' && model !== null && model.specificationVersion === 'v3')
        registerModelCredentials(model);
    }
    if (config.modelProviders !== undefined) {
      const providers = validateModelProviders(config.modelProviders, 'project config: modelProviders');
      // Now, not when a model is first used: a run's inputs may quote the key before that.
      registerProviderCredentials(providers);
      this.modelProviders.push(providers);
    }
    for (const [name, flowClass] of Object.entries(config.flows ?? {})) this.flows.set(name, flowClass);
    for (const entry of config.classes ?? []) if (!this.classes.includes(entry)) this.classes.push(entry);
    return this;
  }

  /** A copy of this registry with `other` layered on top. */
  merged(other: ProjectRegistry | undefined): ProjectRegistry {
    const result = new ProjectRegistry();
    for (const source of [this, other]) {
      if (!source) continue;
      result.register({
        tools: Object.fromEntries(source.tools),
        models: { ...source.models },
        flows: Object.fromEntries(source.flows),
        classes: source.classes,
      });
      result.modelProviders.push(...source.modelProviders);
    }
    return result;
  }

  tool(name: string): CrewlineTool | undefined {
    return this.tools.get(name);
  }

  flow(name: string): FlowClass | undefined {
    return this.flows.get(name);
  }

  /** The registered name of a flow class (what its checkpoints store), if registered. */
  flowName(flowClass: FlowClass): string | undefined {
    for (const [name, candidate] of this.flows) if (candidate === flowClass) return name;
    return undefined;
  }
}

const processRegistry = new ProjectRegistry();

/**
 * Registers a project's tools, models and flows for the whole process (what `crewline.config.ts`
 * does). Its checkpoint `providers` are not: a run finds a provider through its checkpoint config
 * (`providers: providerRegistry(config.providers)`, or a `provider`), the registry its caller built.
 */
export function registerProject(config: ProjectConfig): void {
  processRegistry.register(config);
}

/** The process-wide registry, optionally with `extra` layered on top. */
export function projectRegistry(extra?: ProjectRegistry): ProjectRegistry {
  return extra ? processRegistry.merged(extra) : processRegistry;
}
