import {
  addRedaction,
  type CheckpointEventType,
  MINIMUM_SECRET_LENGTH,
  type RedactionOptions,
  triggerEventTypes,
} from '@crewline/events';
import { z } from 'zod';
import { stateError } from './errors.js';
import { nearestName } from './internal/edit-distance.js';
import { assertSupportedProvider, type CheckpointProvider, isCheckpointProvider } from './provider.js';
import { isProviderRegistry, type ProviderRegistry } from './provider-registry.js';

/** Options a user passes as `checkpoint: { ... }` or `fromCheckpoint: { ... }`. */
export interface CheckpointConfigInput {
  /**
   * Where checkpoints go: a directory (JSON), a database file (SQLite; `.db` is added when it has no
   * suffix) or a connection string (Postgres). Default `'./.checkpoints'`.
   */
  location?: string;
  /** Event types that trigger a write, or `'*'` (alone or in the list) for every event. Default `['task_completed']`. */
  onEvents?: readonly CheckpointEventType[] | '*';
  /**
   * Any object that meets the provider contract. Default: the provider whose registry entry claims
   * `location` (`JsonProvider` for a directory).
   */
  provider?: CheckpointProvider;
  /**
   * Where providers come from when `provider` is not given: the entry that claims `location` makes
   * it, a restore reads `restoreFrom` through it, and a restored run rebuilds the provider its
   * checkpoint stored from it. Build it with `providerRegistry([...yours])` of `@crewline/runtime`.
   * Default: crewline's built-in JSON, SQLite and Postgres entries.
   */
  providers?: ProviderRegistry;
  /**
   * Keep at most N of this run's checkpoints (its lineage); its oldest are pruned after each write.
   * Never another run's, a fork point or a run's latest. Default: keep all.
   */
  maxCheckpoints?: number;
  /** The checkpoint to restore when this config is passed as `fromCheckpoint`. Default: none. */
  restoreFrom?: string;
  /**
   * When another process is continuing the run this one would continue (stores that fence lineage
   * heads): `'error'` rejects with a `conflict` naming the holder; `'fork'` continues on a new branch.
   * Default `'error'`.
   */
  onConflict?: 'error' | 'fork';
  /**
   * How long the run's hold on its lineage head lasts without renewal (renewed every third of it
   * while the run lives); after a crash another process can take the run over once it runs out.
   * Default 20,000 ms.
   */
  leaseTtlMs?: number;
  /**
   * More to redact than the built-in rules: credential `names` (matched by their parts), `patterns`
   * (every match replaced) and exact `values` (at least 8 characters). Added to the process-wide
   * redaction when the config is parsed, so they are kept out of the logs and errors of other runs
   * too. Default: nothing more.
   */
  redact?: RedactionOptions;
}

/** A validated config with defaults applied. */
export interface CheckpointConfig {
  location: string;
  onEvents: readonly CheckpointEventType[];
  provider: CheckpointProvider | undefined;
  providers: ProviderRegistry | undefined;
  maxCheckpoints: number | undefined;
  restoreFrom: string | undefined;
  onConflict: 'error' | 'fork';
  leaseTtlMs: number | undefined;
}

/** The `checkpoint` field of Crew, Flow and Agent: inherit, defaults, opt out, or a config. */
export type CheckpointSetting = boolean | CheckpointConfigInput | undefined;

export const DEFAULT_CHECKPOINT_LOCATION = './.checkpoints';
export const DEFAULT_ON_EVENTS: readonly CheckpointEventType[] = ['task_completed'];

const eventTypeValues = ['*', ...triggerEventTypes] as [string, ...string[]];

const configSchema = z.strictObject({
  location: z.string().min(1, 'must not be empty').optional(),
  onEvents: z
    .preprocess(
      (value) => (value === '*' ? ['*'] : value),
      z.array(z.enum(eventTypeValues)).min(1, 'must name at least one event type or "*"'),
    )
    .optional(),
  provider: z
    .custom<CheckpointProvider>(
      isCheckpointProvider,
      'must be a checkpoint provider (kind, write, read, list, latest, prune, delete)',
    )
    .optional(),
  providers: z
    .custom<ProviderRegistry>(
      isProviderRegistry,
      'must be a provider registry (createProviderRegistry or providerRegistry of @crewline/runtime)',
    )
    .optional(),
  maxCheckpoints: z.number().int('must be a whole number').positive('must be at least 1').optional(),
  restoreFrom: z.string().min(1, 'must not be empty').optional(),
  onConflict: z.enum(['error', 'fork']).optional(),
  leaseTtlMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(1000, 'must be at least 1000 (a renewal every third of it)')
    .optional(),
  redact: z
    .strictObject({
      names: z
        .array(z.string().regex(/[A-Za-z0-9]/, 'must be a property name such as "employeeSsn"'))
        .optional(),
      patterns: z
        .array(
          z
            .union([z.instanceof(RegExp), z.string()])
            .refine(
              isUsablePattern,
              'must be a valid regular expression that does not match the empty string',
            ),
        )
        .optional(),
      values: z
        .array(
          z
            .string()
            .min(
              MINIMUM_SECRET_LENGTH,
              `must be at least ${MINIMUM_SECRET_LENGTH} characters (shorter values would blank ordinary words; redact by name or pattern instead)`,
            ),
        )
        .optional(),
    })
    .optional(),
});

function isUsablePattern(pattern: RegExp | string): boolean {
  try {
    return !new RegExp(pattern instanceof RegExp ? pattern.source : pattern).test('');
  } catch {
    return false;
  }
}

const renamedKeys: Record<string, string> = {
  directory: 'use `location`',
  on_events: 'use `onEvents`',
  max_checkpoints: 'use `maxCheckpoints`',
  restore_from: 'use `restoreFrom`',
  path: 'use `location`',
  dir: 'use `location`',
};

/** The option names the schema knows in the object at `path` (the config itself, or `redact`). */
function knownOptionsAt(path: readonly PropertyKey[]): readonly string[] {
  if (path.length === 0) return Object.keys(configSchema.shape);
  if (path.length === 1 && path[0] === 'redact') return Object.keys(configSchema.shape.redact.unwrap().shape);
  return [];
}

/**
 * The refusal of unknown option `key` in the object at `path`: a renamed one says its new name; a
 * misspelt one gets the known option it is closest to (the same guess the CLI and
 * `crewline.config.ts` make), and every one the fix and the options known there.
 */
function unknownOptionLine(key: string, path: readonly PropertyKey[]): string {
  const where = path.length === 0 ? '' : `${path.map(String).join('.')}: `;
  if (path.length === 0 && Object.hasOwn(renamedKeys, key))
    return `unknown option "${key}"; ${renamedKeys[key]}`;
  const known = knownOptionsAt(path);
  const listed = known.length > 0 ? ` (known options: ${known.join(', ')})` : '';
  const near = nearestName(key, known);
  return near === undefined
    ? `${where}unknown option "${key}"; remove it${listed}`
    : `${where}unknown option "${key}" — did you mean "${near}"? Rename or remove it${listed}`;
}

/**
 * Validates checkpoint options and applies defaults. An unknown option is an error that names it
 * (for `directory`, says "use `location`"; for a misspelt one, the option it is closest to, "did you
 * mean"); an unknown event type is an error that names it.
 */
export function parseCheckpointConfig(input: CheckpointConfigInput | true): CheckpointConfig {
  const value = input === true ? {} : input;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw stateError('invalid_config', 'checkpoint config must be true, false, or an options object');
  }
  const provider = (value as { provider?: unknown }).provider;
  if (isCheckpointProvider(provider)) assertSupportedProvider(provider);
  const result = configSchema.safeParse(value);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      if (issue.code === 'unrecognized_keys')
        return issue.keys.map((key) => unknownOptionLine(key, issue.path)).join('; ');
      const path = issue.path.map(String).join('.');
      if (issue.code === 'invalid_value' && issue.path[0] === 'onEvents') {
        const bad = (value as { onEvents?: unknown[] }).onEvents?.[issue.path[1] as number];
        return `onEvents: unknown event type ${JSON.stringify(bad)}; use an event type of the catalog or "*"`;
      }
      return `${path}: ${issue.message}`;
    });
    throw stateError('invalid_config', `checkpoint config: ${lines.join('; ')}`);
  }
  const parsed = result.data;
  if (parsed.redact !== undefined) addRedaction(parsed.redact);
  return {
    location: parsed.location ?? DEFAULT_CHECKPOINT_LOCATION,
    onEvents: (parsed.onEvents as CheckpointEventType[] | undefined) ?? DEFAULT_ON_EVENTS,
    provider: parsed.provider,
    providers: parsed.providers,
    maxCheckpoints: parsed.maxCheckpoints,
    restoreFrom: parsed.restoreFrom,
    onConflict: parsed.onConflict ?? 'error',
    leaseTtlMs: parsed.leaseTtlMs,
  };
}

/**
 * Resolves the `checkpoint` setting along an inheritance chain, most specific first
 * (Task → Agent → Crew, or Agent → Flow): `undefined` defers to the next, `false` stops with "off",
 * `true` means defaults, an object is used as is. Returns `undefined` when checkpointing is off.
 */
export function resolveCheckpointSetting(chain: readonly CheckpointSetting[]): CheckpointConfig | undefined {
  for (const setting of chain) {
    if (setting === undefined) continue;
    if (setting === false) return undefined;
    return parseCheckpointConfig(setting);
  }
  return undefined;
}

/** True when `config` asks for a checkpoint on `eventType`. */
export function triggersOn(config: Pick<CheckpointConfig, 'onEvents'>, eventType: string): boolean {
  return config.onEvents.includes('*') || (config.onEvents as readonly string[]).includes(eventType);
}
