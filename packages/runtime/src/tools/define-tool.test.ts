import { CrewlineError } from '@crewline/events';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import type { StandardSchema } from '../schema/standard-schema.js';
import { defineTool, isCrewlineTool, toolsByName } from './define-tool.js';
import { toModelTools } from './model-tools.js';
import { runTool } from './run-tool.js';

const context = { toolCallId: 'call-1', messages: [], abortSignal: undefined };

const weather = defineTool({
  name: 'get_weather',
  description: 'Weather for a city',
  inputSchema: z.object({ city: z.string().min(2), unit: z.enum(['c', 'f']).default('c') }),
  execute: async ({ city, unit }) => ({ city, temperature: unit === 'c' ? 21 : 70, at: new Date(0) }),
});

describe('defineTool', () => {
  it('types the input from the schema and marks the tool', () => {
    expectTypeOf(weather.execute).parameter(0).toEqualTypeOf<{ city: string; unit: 'c' | 'f' }>();
    expect(isCrewlineTool(weather)).toBe(true);
    expect(isCrewlineTool({ ...weather })).toBe(false);
    expect(Object.isFrozen(weather)).toBe(true);
  });

  it('rejects names providers refuse, a missing schema and a missing execute', () => {
    expect(() =>
      defineTool({ name: 'has space', description: '', inputSchema: z.object({}), execute: () => 1 }),
    ).toThrow(/1-64 letters/);
    expect(() =>
      defineTool({ name: 'x'.repeat(65), description: '', inputSchema: z.object({}), execute: () => 1 }),
    ).toThrow(CrewlineError);
    expect(() =>
      defineTool({ name: 'ok', description: '', inputSchema: {} as z.ZodObject, execute: () => 1 }),
    ).toThrow(/needs an inputSchema \(a Standard Schema/);
    expect(() =>
      defineTool({ name: 'ok', description: '', inputSchema: z.object({}), execute: undefined as never }),
    ).toThrow(/execute/);
  });

  it('indexes tools by name and refuses two different tools with one name', () => {
    expect(Object.keys(toolsByName([weather]))).toEqual(['get_weather']);
    expect(toolsByName({ anything: weather }).get_weather).toBe(weather);
    const twin = defineTool({
      name: 'get_weather',
      description: 'other',
      inputSchema: z.object({}),
      execute: () => 0,
    });
    expect(() => toolsByName([weather, twin])).toThrow(/two different tools are named "get_weather"/);
    expect(toolsByName(undefined)).toEqual({});
  });

  it('exposes the JSON schema to the model without a validator or execute', async () => {
    const tools = toModelTools({ get_weather: weather });
    const modelTool = tools.get_weather!;
    expect('execute' in modelTool && modelTool.execute !== undefined).toBe(false);
    const schema = await (modelTool.inputSchema as { jsonSchema: unknown }).jsonSchema;
    expect(schema).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string', minLength: 2 } },
      required: ['city'],
    });
  });
});

describe('runTool', () => {
  it('validates (applying defaults), executes and returns JSON-safe output', async () => {
    const started: unknown[] = [];
    const outcome = await runTool(
      'get_weather',
      weather,
      { city: 'Oslo' },
      context,
      ['get_weather'],
      (input) => started.push(input),
    );
    expect(started).toEqual([{ city: 'Oslo', unit: 'c' }]);
    expect(outcome).toEqual({
      status: 'succeeded',
      output: { city: 'Oslo', temperature: 21, at: '1970-01-01T00:00:00.000Z' },
    });
  });

  it('reports invalid input with the path at fault, without executing', async () => {
    const started: unknown[] = [];
    const outcome = await runTool('get_weather', weather, { city: 'X', unit: 'k' }, context, [], (input) =>
      started.push(input),
    );
    expect(outcome.status).toBe('invalid_input');
    expect(outcome.status === 'invalid_input' && outcome.message).toMatch(/city: .*; unit: /);
    expect(started).toEqual([]);
  });

  it('reports unknown tools with the names that exist, and thrown errors as failures', async () => {
    expect(await runTool('nope', undefined, {}, context, ['a', 'b'])).toEqual({
      status: 'unknown_tool',
      message: 'there is no tool named "nope"; available tools: a, b',
    });
    const failing = defineTool({
      name: 'failing',
      description: '',
      inputSchema: z.object({}),
      execute: () => Promise.reject(new Error('upstream 503 with token sk-proj-ABCDEFGHIJKLMNOPQRSTUV')),
    });
    const outcome = await runTool('failing', failing, {}, context, ['failing']);
    expect(outcome.status).toBe('failed');
    expect(outcome.status === 'failed' && outcome.message).toBe(
      'tool "failing" failed: upstream 503 with token [REDACTED]',
    );
  });
});

/** A Standard Schema written by hand, as a library other than zod would provide it. */
function cityQuerySchema(options: { withJsonSchema: boolean }): StandardSchema<unknown, { city: string }> {
  return {
    '~standard': {
      version: 1,
      vendor: 'handmade',
      validate(value) {
        const city = (value as { city?: unknown } | null)?.city;
        return typeof city === 'string'
          ? { value: { city } }
          : { issues: [{ message: 'expected a string', path: [{ key: 'city' }] }] };
      },
      ...(options.withJsonSchema
        ? {
            jsonSchema: {
              input: ({ target }: { target: string }) => ({
                $comment: target,
                type: 'object',
                properties: { city: { type: 'string' } },
                required: ['city'],
              }),
            },
          }
        : {}),
    },
  };
}

describe('tools with any Standard Schema', () => {
  it('accepts a zod/mini schema: typed input, JSON Schema for the model, validation by the schema', async () => {
    const mini = defineTool({
      name: 'mini_weather',
      description: 'Weather',
      inputSchema: zm.object({ city: zm.string().check(zm.minLength(2)) }),
      execute: ({ city }) => `sunny in ${city}`,
    });
    expectTypeOf(mini.execute).parameter(0).toEqualTypeOf<{ city: string }>();
    expect(mini.jsonSchema).toMatchObject({ type: 'object', properties: { city: { type: 'string' } } });
    expect(await runTool('mini_weather', mini, { city: 'Oslo' }, context, [])).toEqual({
      status: 'succeeded',
      output: 'sunny in Oslo',
    });
    const refused = await runTool('mini_weather', mini, { city: 'O' }, context, []);
    expect(refused.status).toBe('invalid_input');
    expect((refused as { message: string }).message).toMatch(
      /^invalid input for tool "mini_weather": city: /,
    );
  });

  it('accepts a schema of another library, shown through Standard JSON Schema or a given jsonSchema', async () => {
    const described = defineTool({
      name: 'lookup',
      description: 'Look up a city',
      inputSchema: cityQuerySchema({ withJsonSchema: true }),
      execute: ({ city }) => city.toUpperCase(),
    });
    expectTypeOf(described.execute).parameter(0).toEqualTypeOf<{ city: string }>();
    expect(described.jsonSchema).toMatchObject({ $comment: 'draft-07', required: ['city'] });
    const tools = toModelTools({ lookup: described });
    expect(JSON.stringify(tools.lookup)).toContain('"required":["city"]');
    expect(await runTool('lookup', described, { city: 'rome' }, context, [])).toEqual({
      status: 'succeeded',
      output: 'ROME',
    });
    expect(await runTool('lookup', described, { town: 'rome' }, context, [])).toEqual({
      status: 'invalid_input',
      message: 'invalid input for tool "lookup": city: expected a string',
    });

    const given = { type: 'object', properties: { city: { type: 'string' } } };
    const plain = defineTool({
      name: 'lookup_plain',
      description: 'Look up a city',
      inputSchema: cityQuerySchema({ withJsonSchema: false }),
      jsonSchema: given,
      execute: ({ city }) => city,
    });
    expect(plain.jsonSchema).toBe(given);
  });

  it('refuses a schema that can show the model nothing, saying to pass jsonSchema', () => {
    expect(() =>
      defineTool({
        name: 'blind',
        description: '',
        inputSchema: cityQuerySchema({ withJsonSchema: false }),
        execute: () => 1,
      }),
    ).toThrow(/its handmade inputSchema cannot describe itself as JSON Schema; pass `jsonSchema`/);
  });
});
