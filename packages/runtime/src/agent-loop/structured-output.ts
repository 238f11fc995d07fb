import type { JSONSchema7, OutputInterface } from 'ai';
import { z } from 'zod';
import { describeIssues } from '../schema/standard-schema.js';
import { CORRECTION_PREFIX } from './control-messages.js';

export type StructuredParse = { success: true; value: unknown } | { success: false; reason: string };

/** JSON schema of a zod schema, the way it is shown to models (inputs as they are written). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
}

/** The JSON text inside an answer: the whole answer, a fenced block, or the outermost braces/brackets. */
function jsonCandidates(text: string): string[] {
  const trimmed = text.trim();
  const candidates = [trimmed];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(trimmed);
  if (fenced?.[1]) candidates.push(fenced[1].trim());
  for (const [open, close] of [
    ['{', '}'],
    ['[', ']'],
  ] as const) {
    const start = trimmed.indexOf(open);
    const end = trimmed.lastIndexOf(close);
    if (start >= 0 && end > start) candidates.push(trimmed.slice(start, end + 1));
  }
  return candidates;
}

/** Parses and validates a final answer against the output schema. Never throws. */
export function parseStructuredOutput(text: string, schema: z.ZodType): StructuredParse {
  let parsed: { value: unknown } | undefined;
  for (const candidate of jsonCandidates(text)) {
    try {
      parsed = { value: JSON.parse(candidate) };
      break;
    } catch {
      // try the next candidate
    }
  }
  if (parsed === undefined) return { success: false, reason: 'the answer is not valid JSON' };
  const result = schema.safeParse(parsed.value);
  if (result.success) return { success: true, value: result.data };
  const issues = describeIssues(result.error.issues, '(root)');
  return { success: false, reason: `the JSON does not match the schema (${issues})` };
}

/** The user message that asks the model, once, to answer again with valid JSON. */
export function correctionMessage(reason: string, schema: z.ZodType): string {
  return [
    `${CORRECTION_PREFIX} ${reason}.`,
    'Reply again with only a JSON value that matches this JSON schema, and no other text:',
    JSON.stringify(jsonSchemaOf(schema)),
  ].join('\n');
}

/**
 * Asks the provider for JSON (its native structured-output mode) without letting the AI SDK throw on
 * a bad answer: validation is the loop's job, after the call has been recorded in the conversation.
 */
export function jsonResponseOutput(schema: z.ZodType): OutputInterface<string, string, never> {
  return {
    name: 'crewline-json',
    responseFormat: Promise.resolve({ type: 'json' as const, schema: jsonSchemaOf(schema) as JSONSchema7 }),
    parseCompleteOutput: async ({ text }) => text,
    parsePartialOutput: async ({ text }) => ({ partial: text }),
    createElementStreamTransform: () => undefined,
  };
}
