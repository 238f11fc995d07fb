import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonSchemaOf } from '../../agent-loop/structured-output.js';
import { sampleFromSchema } from './sample-from-schema.js';

interface Category {
  name: string;
  children: Category[];
}
const category: z.ZodType<Category> = z.lazy(() =>
  z.object({ name: z.string(), children: z.array(category) }),
);

const schemas: Record<string, z.ZodType> = {
  scalars: z.object({
    text: z.string().min(40).max(60),
    count: z.number().int().min(3).max(7),
    flag: z.boolean(),
    none: z.null(),
  }),
  formats: z.object({
    email: z.email(),
    url: z.url(),
    id: z.uuid(),
    when: z.iso.datetime(),
    day: z.iso.date(),
  }),
  choices: z.object({
    level: z.enum(['low', 'mid']),
    kind: z.literal('fixed'),
    either: z.union([z.number(), z.string()]),
  }),
  optional: z.object({
    maybe: z.string().nullable(),
    later: z.number().optional(),
    withDefault: z.string().default('x'),
  }),
  arrays: z.object({ few: z.array(z.number()).min(3).max(4), tuple: z.tuple([z.string(), z.number()]) }),
  nested: z.object({ outer: z.object({ inner: z.object({ value: z.number().positive() }) }) }),
  intersection: z.intersection(z.object({ a: z.string() }), z.object({ b: z.number() })),
  recursive: category,
  topLevelArray: z.array(z.object({ name: z.string() })).min(1),
};

describe('sampleFromSchema', () => {
  for (const [name, schema] of Object.entries(schemas)) {
    it(`builds a value the ${name} schema accepts, the same every time`, () => {
      const jsonSchema = jsonSchemaOf(schema);
      const value = sampleFromSchema(jsonSchema, 'market research', 12345);
      expect(schema.safeParse(value).success, JSON.stringify(value)).toBe(true);
      expect(sampleFromSchema(jsonSchema, 'market research', 12345)).toEqual(value);
    });
  }

  it('says in its strings that it is offline and what it was about', () => {
    expect(
      sampleFromSchema({ type: 'object', properties: { title: { type: 'string' } } }, 'bicycles', 1),
    ).toEqual({
      title: 'offline title for bicycles',
    });
  });
});
