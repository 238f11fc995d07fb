import type { JSONSchema7, JSONSchema7Definition } from '@ai-sdk/provider';

/**
 * Builds a deterministic value that satisfies a JSON schema (the subset zod and the AI SDK produce:
 * objects, arrays, strings with formats and lengths, numbers with bounds, enums, consts, unions, $ref
 * into `$defs`/`definitions`). Strings say they come from the offline model and mention `topic`.
 */
export function sampleFromSchema(
  schema: JSONSchema7Definition | undefined,
  topic: string,
  seed: number,
): unknown {
  const root = typeof schema === 'object' ? schema : {};
  return sample(root, root, { topic, seed, depth: 0, name: 'value' });
}

interface SampleContext {
  topic: string;
  seed: number;
  depth: number;
  name: string;
}

function resolveReference(root: JSONSchema7, reference: string): JSONSchema7 {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(reference);
  if (match) {
    const table = (root as Record<string, unknown>)[match[1]!] as
      | Record<string, JSONSchema7Definition>
      | undefined;
    const found = table?.[decodeURIComponent(match[2]!)];
    if (typeof found === 'object') return found;
  }
  return reference === '#' ? root : {};
}

function sample(definition: JSONSchema7Definition, root: JSONSchema7, context: SampleContext): unknown {
  if (definition === true || definition === false) return null;
  let schema = definition;
  if (schema.$ref) schema = { ...resolveReference(root, schema.$ref), ...withoutReference(schema) };
  // A schema that demands infinite nesting (minItems on a recursive array) gets cut off here.
  if (context.depth > 32) return null;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) {
    const nonNull = alternatives.find(
      (item: JSONSchema7Definition) => typeof item === 'object' && item.type !== 'null',
    );
    return sample(nonNull ?? alternatives[0]!, root, context);
  }
  if (schema.allOf && schema.allOf.length > 0) {
    const merged: JSONSchema7 = {};
    for (const part of schema.allOf) if (typeof part === 'object') mergeInto(merged, part);
    return sample(merged, root, context);
  }
  const type = Array.isArray(schema.type)
    ? (schema.type.find((item: string) => item !== 'null') ?? schema.type[0])
    : schema.type;
  switch (type ?? (schema.properties ? 'object' : schema.items ? 'array' : 'string')) {
    case 'object':
      return sampleObject(schema, root, context);
    case 'array':
      return sampleArray(schema, root, context);
    case 'number':
    case 'integer':
      return sampleNumber(schema, type === 'integer', context.seed);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return sampleString(schema, context);
  }
}

function withoutReference(schema: JSONSchema7): JSONSchema7 {
  const { $ref: _ignored, ...rest } = schema;
  return rest;
}

function mergeInto(target: JSONSchema7, source: JSONSchema7): void {
  if (source.properties) target.properties = { ...target.properties, ...source.properties };
  if (source.required) target.required = [...(target.required ?? []), ...source.required];
  for (const [key, value] of Object.entries(source)) {
    if (key !== 'properties' && key !== 'required') (target as Record<string, unknown>)[key] = value;
  }
}

function sampleObject(
  schema: JSONSchema7,
  root: JSONSchema7,
  context: SampleContext,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (context.depth > 4 && !required.has(key)) continue;
    Object.defineProperty(result, key, {
      value: sample(property, root, { ...context, depth: context.depth + 1, name: key }),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

function sampleArray(schema: JSONSchema7, root: JSONSchema7, context: SampleContext): unknown[] {
  const minimum = schema.minItems ?? 0;
  const maximum = schema.maxItems ?? Number.POSITIVE_INFINITY;
  // Near the top, two items make a plausible list; deeper down only what the schema demands, so
  // recursive schemas (a tree of categories) stay small and finite.
  const count = context.depth <= 2 ? Math.min(Math.max(minimum, 2), maximum) : minimum;
  const result: unknown[] = [];
  for (let index = 0; index < count; index += 1) {
    const item = Array.isArray(schema.items) ? schema.items[index] : schema.items;
    result.push(
      sample(item ?? {}, root, {
        ...context,
        depth: context.depth + 1,
        seed: context.seed + index,
        name: context.name,
      }),
    );
  }
  return result;
}

function sampleNumber(schema: JSONSchema7, integer: boolean, seed: number): number {
  const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
  const high =
    schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : low + 99);
  if (high < low) return low;
  const value = low + (seed % (Math.floor(high - low) + 1));
  return integer ? Math.round(value) : value;
}

const formatSamples: Record<string, string> = {
  email: 'offline@example.com',
  uri: 'https://example.com/offline',
  url: 'https://example.com/offline',
  uuid: '00000000-0000-4000-8000-000000000000',
  'date-time': '2000-01-01T00:00:00.000Z',
  date: '2000-01-01',
  time: '00:00:00',
};

function sampleString(schema: JSONSchema7, context: SampleContext): string {
  const formatted = schema.format ? formatSamples[schema.format] : undefined;
  if (formatted) return formatted;
  let text = `offline ${context.name} for ${context.topic || 'the request'}`;
  if (schema.maxLength !== undefined && text.length > schema.maxLength)
    text = text.slice(0, schema.maxLength);
  const minimum = schema.minLength ?? 0;
  while (text.length < minimum) text += '.';
  return text;
}
