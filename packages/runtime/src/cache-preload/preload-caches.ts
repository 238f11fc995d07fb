import { randomUUID } from 'node:crypto';
import {
  type BaseEvent,
  type EventContext,
  LLMCallCompletedEvent,
  LLMCallFailedEvent,
  LLMCallStartedEvent,
  logger,
} from '@crewline/events';
import { generateText } from 'ai';
import { addUsage, emptyUsage, type TokenUsage } from '../agent-loop/conversation.js';
import { errorText, llmSource, usageFrom } from '../agent-loop/model-step.js';
import type { LanguageModelObject, ModelInput } from '../models/model-id.js';
import { type ModelRegistry, resolveModel } from '../models/resolve-model.js';
import { commonPrefix, MINIMUM_SHARED_PREFIX } from './common-prefix.js';
import { type SystemPrompt, systemPromptFor, systemPromptText } from './system-prompt.js';

const component = 'cache-preload';

export type CachePreloadStrategy = 'parallel' | 'sequential' | 'shared_prefix';

/** One agent whose prompt cache should be warm before its first task. */
export interface CachePreloadAgent {
  /** A model object, or a `provider:model` id resolved with `resolveModel`. */
  model: ModelInput;
  /** The `provider:model` id (for events and logs). */
  modelId: string;
  /**
   * The system prompt exactly as the real run will send it (use `systemPromptFor` for both), since a
   * cache only hits on identical bytes.
   */
  system: SystemPrompt;
  /** Put on this agent's probe events (agent id and role). Default: the shared `context`. */
  context?: EventContext;
}

export interface PreloadCachesOptions {
  agents: CachePreloadAgent[];
  /**
   * `'parallel'` probes every agent at once (at most `concurrency` at a time), `'sequential'` one after
   * another, `'shared_prefix'` warms the prefix common to all prompts once (when it has at least
   * `minimumSharedPrefix` characters, else it falls back to parallel) and then each full prompt.
   * Default `'parallel'`.
   */
  strategy?: CachePreloadStrategy;
  /** Receives LLM events for each probe (they cost tokens, so they are reported). Default: none. */
  emit?: (source: unknown, event: BaseEvent) => void;
  /** Event context for probes of agents without their own. Default `{}`. */
  context?: EventContext;
  abortSignal?: AbortSignal;
  /** Most probes in flight with `'parallel'`. Default `4`. */
  concurrency?: number;
  /** Shortest shared prefix, in characters, worth its own probe. Default `1024`. */
  minimumSharedPrefix?: number;
  /** Registered models, for agents whose model is an id. Default: none. */
  models?: ModelRegistry;
  /** The user message of a probe. Default `'Ready.'`. */
  probeMessage?: string;
}

/** One probe sent (or attempted). */
export interface CachePreloadProbe {
  modelId: string;
  /** `'shared_prefix'` for the prefix probe, else `'full'`. */
  part: 'shared_prefix' | 'full';
  /** Characters of system prompt the probe sent. */
  systemLength: number;
  ok: boolean;
  error?: string;
  usage: TokenUsage;
}

export interface CachePreloadResult {
  /** The strategy that ran (`'parallel'` when `'shared_prefix'` fell back). */
  strategy: CachePreloadStrategy;
  /** Length of the shared prefix that was warmed, `0` when none was. */
  sharedPrefixLength: number;
  probes: CachePreloadProbe[];
  /** Tokens the probes used, to add to the run's usage. */
  usage: TokenUsage;
}

interface ProbeJob {
  model: LanguageModelObject;
  modelId: string;
  system: SystemPrompt;
  context: EventContext;
  part: CachePreloadProbe['part'];
}

/**
 * Sends one probe: the system prompt, a short user message, `maxOutputTokens: 1` and `temperature: 0`.
 * The settings are per call, so nothing on the model changes and nothing needs restoring. Failures are
 * logged and reported, never thrown.
 */
async function probe(job: ProbeJob, options: PreloadCachesOptions): Promise<CachePreloadProbe> {
  const callId = `preload-${randomUUID()}`;
  const source = llmSource(job.modelId);
  const base = { modelId: job.modelId, part: job.part, systemLength: systemPromptText(job.system).length };
  options.emit?.(
    source,
    new LLMCallStartedEvent({ model: job.modelId, callId, messageCount: 1, source, context: job.context }),
  );
  try {
    const result = await generateText({
      model: job.model,
      system: job.system,
      messages: [{ role: 'user', content: options.probeMessage ?? 'Ready.' }],
      maxOutputTokens: 1,
      temperature: 0,
      // A probe is an optimisation: one attempt, no retries that would delay the real work.
      maxRetries: 0,
      ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
    });
    const usage = usageFrom(result.usage);
    options.emit?.(
      source,
      new LLMCallCompletedEvent({
        model: job.modelId,
        callId,
        response: result.text,
        toolCalls: [],
        usage: { ...usage },
        source,
        context: job.context,
      }),
    );
    return { ...base, ok: true, usage };
  } catch (error) {
    const message = errorText(error);
    logger.warn(
      component,
      `cache preload probe for model "${job.modelId}" failed; the run continues without a warm cache`,
      error,
    );
    options.emit?.(
      source,
      new LLMCallFailedEvent({ model: job.modelId, callId, error: message, source, context: job.context }),
    );
    return { ...base, ok: false, error: message, usage: emptyUsage() };
  }
}

async function runParallel(jobs: ProbeJob[], options: PreloadCachesOptions): Promise<CachePreloadProbe[]> {
  const results: CachePreloadProbe[] = new Array(jobs.length);
  const limit = Math.max(1, Math.min(options.concurrency ?? 4, jobs.length));
  let next = 0;
  const workers = Array.from({ length: limit }, async () => {
    while (next < jobs.length && !options.abortSignal?.aborted) {
      const index = next;
      next += 1;
      results[index] = await probe(jobs[index]!, options);
    }
  });
  await Promise.all(workers);
  return results.filter((result) => result !== undefined);
}

async function runSequential(jobs: ProbeJob[], options: PreloadCachesOptions): Promise<CachePreloadProbe[]> {
  const results: CachePreloadProbe[] = [];
  for (const job of jobs) {
    if (options.abortSignal?.aborted) break;
    results.push(await probe(job, options));
  }
  return results;
}

/**
 * Warms each agent's prompt cache with a 1-token probe before the first real task. Best-effort: it
 * logs and reports failures, never throws. Agents with an empty system prompt are skipped, and agents
 * sharing a model and an identical prompt are probed once.
 */
export async function preloadCaches(options: PreloadCachesOptions): Promise<CachePreloadResult> {
  const requested = options.strategy ?? 'parallel';
  const empty: CachePreloadResult = {
    strategy: requested === 'shared_prefix' ? 'parallel' : requested,
    sharedPrefixLength: 0,
    probes: [],
    usage: emptyUsage(),
  };
  try {
    const seen = new Set<string>();
    const jobs: ProbeJob[] = [];
    for (const agent of options.agents) {
      const text = systemPromptText(agent.system);
      const key = `${agent.modelId}\u0000${JSON.stringify(agent.system)}`;
      if (text.length === 0 || seen.has(key)) continue;
      seen.add(key);
      const model =
        typeof agent.model === 'string'
          ? resolveModel(agent.model, options.models ? { models: options.models } : {})
          : agent.model;
      jobs.push({
        model,
        modelId: agent.modelId,
        system: agent.system,
        context: agent.context ?? options.context ?? {},
        part: 'full',
      });
    }
    if (jobs.length === 0) return empty;
    logger.info(component, `warming prompt caches for ${jobs.length} agent prompt(s) (${requested})`);
    let strategy = requested;
    let sharedPrefixLength = 0;
    const probes: CachePreloadProbe[] = [];
    if (strategy === 'shared_prefix') {
      const prefix = commonPrefix(jobs.map((job) => systemPromptText(job.system)));
      const minimum = options.minimumSharedPrefix ?? MINIMUM_SHARED_PREFIX;
      if (jobs.length >= 2 && prefix.length >= minimum) {
        sharedPrefixLength = prefix.length;
        const first = jobs[0]!;
        probes.push(
          await probe(
            { ...first, system: systemPromptFor(first.model, prefix), part: 'shared_prefix' },
            options,
          ),
        );
        // With the prefix cached, the per-agent probes only write their own suffixes: run them together.
        probes.push(...(await runParallel(jobs, options)));
      } else {
        logger.info(
          component,
          `shared prefix is ${prefix.length} characters (< ${minimum}); falling back to parallel probes`,
        );
        strategy = 'parallel';
      }
    }
    if (strategy === 'parallel') probes.push(...(await runParallel(jobs, options)));
    if (strategy === 'sequential') probes.push(...(await runSequential(jobs, options)));
    const usage = emptyUsage();
    for (const result of probes) addUsage(usage, result.usage);
    return { strategy, sharedPrefixLength, probes, usage };
  } catch (error) {
    logger.warn(component, 'cache preload failed; the run continues without it', error);
    return empty;
  }
}
