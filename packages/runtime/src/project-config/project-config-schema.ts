import { CrewlineError, logger } from '@crewline/events';
import { parseModelPrices } from '@crewline/runtime-state';
import { nearestName } from '@crewline/runtime-state/internal';
import { z } from 'zod';

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}

/** A record of `entry`, with a message that says what the record holds when it is not one. */
function byName(entry: z.ZodType, holds: string) {
  return z.record(z.string(), entry, {
    error: (issue) =>
      issue.code === 'invalid_type' ? `must be an object of ${holds}, not ${shown(issue.input)}` : undefined,
  });
}

function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : `a ${typeof value}`;
}

const tool = z.custom<unknown>(
  (value) => isObject(value) && typeof value.execute === 'function',
  'is not a tool; use defineTool({...})',
);
// A model id string (`openai:gpt-4o`), an AI SDK model object, or a function that makes one.
const model = z.custom<unknown>(
  (value) =>
    typeof value === 'string' || typeof value === 'function' || (isObject(value) && !Array.isArray(value)),
  'is not a model; give an AI SDK model, a function that returns one, or a model id string',
);
const flowClass = z.custom<unknown>(
  (value) => typeof value === 'function',
  'is not a class; give a Flow subclass',
);
const valueClass = z.custom<unknown>(
  (value) => typeof value === 'function' || (isObject(value) && typeof value.class === 'function'),
  'is not a class; give the class (Money) or { class: Money, name: "billing.Money" }',
);
const providerEntry = z.custom<unknown>(
  (value) => isObject(value) && !Array.isArray(value),
  'is not a provider registry entry; give an object like the built-in entries (see the @crewline/runtime-state README)',
);

/**
 * The shape of `crewline.config.ts` at the boundary: each known key's kind (`modelPrices` has its own
 * schema, `parseModelPrices`; each of `modelProviders` is checked by `validateModelProviders`). Other keys are let through: other packages read their own (`runs`, for
 * `crewline worker`).
 */
const projectConfigSchema = z.looseObject({
  tools: byName(tool, 'tools by name').optional(),
  models: byName(model, 'models by id').optional(),
  modelProviders: z
    .custom<unknown>(
      (value) => isObject(value) && !Array.isArray(value),
      'must be an object of AI SDK providers by prefix ({ google: createGoogleGenerativeAI() }) or createProviderRegistry({...})',
    )
    .optional(),
  flows: byName(flowClass, 'Flow subclasses by name').optional(),
  providers: z.array(providerEntry, { error: 'must be an array of provider registry entries' }).optional(),
  classes: z.array(valueClass, { error: 'must be an array of classes, e.g. classes: [Money]' }).optional(),
});

/**
 * Checks a project config (what `crewline.config.ts` exports, or `registerProject` is given): a wrong kind of value is an `invalid_config` error naming `where` (the file) and one
 * `path: message` line per problem, e.g. `crewline.config.ts: models: must be an object of models by
 * name, not a number`.
 */
/**
 * The keys a project config may hold: the runtime's, and those other packages read from the same
 * file (`runs`, for `crewline worker`).
 */
const knownKeys = [
  'tools',
  'models',
  'modelProviders',
  'modelPrices',
  'flows',
  'providers',
  'classes',
  'runs',
];

/** Configs already warned of (weakly held: a config dropped by its owner is forgotten). */
const warnedConfigs = new WeakSet<object>();

/**
 * Warns of a key no package reads, naming the known key it was probably meant to be: a typo such as
 * `modles` would otherwise leave the project's models unregistered without a word until a restore
 * fails for a missing model.
 */
function warnOfUnknownKeys(config: Record<string, unknown>, where: string): void {
  // Once per config: loadProjectConfig checks it under its file's name, then registering it checks
  // it again ("project config"), and the same typo was warned of twice.
  if (warnedConfigs.has(config)) return;
  warnedConfigs.add(config);
  for (const key of Object.keys(config)) {
    if (knownKeys.includes(key)) continue;
    const near = nearestName(key, knownKeys);
    logger.warn(
      'runtime',
      `${where}: unknown key "${key}"${near ? ` — did you mean "${near}"?` : ''} (known: ${knownKeys.join(', ')}); it is ignored`,
    );
  }
}

export function checkProjectConfig(config: unknown, where: string): void {
  if (!isObject(config) || Array.isArray(config)) {
    throw new CrewlineError(
      'runtime',
      'invalid_config',
      `${where} must be an object from defineConfig({...}), not ${shown(config)}`,
    );
  }
  warnOfUnknownKeys(config, where);
  const result = projectConfigSchema.safeParse(config);
  if (result.success) {
    // A wrong price fails when the config loads, not when a cost is shown; the readers (CLI,
    // explorer, worker queue) take the table from the config itself.
    parseModelPrices(config.modelPrices, `${where}: modelPrices`);
    return;
  }
  const lines = result.error.issues.map((issue) => `${issue.path.map(String).join('.')}: ${issue.message}`);
  throw new CrewlineError('runtime', 'invalid_config', `${where}: ${lines.join('; ')}`);
}
