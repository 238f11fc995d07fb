import { formatIssues } from '@crewline/runtime-state';
import { z } from 'zod';
import { workerError } from './errors.js';

/** How a queued run is run: the options `queue.enqueue` and `queue.fork` share. */
export const runLimitsSchema = z.strictObject({
  idempotencyKey: z
    .string()
    .min(1, 'must not be empty')
    .max(512, 'must be at most 512 characters')
    .optional(),
  priority: z.number().int('must be a whole number').min(-1000).max(1000).optional(),
  timeoutMs: z.number().int('must be a whole number').positive('must be positive').optional(),
  maxAttempts: z.number().int('must be a whole number').min(1, 'must be at least 1').max(100).optional(),
});

/** `options` as `schema` reads them; refused with `invalid_argument` and `call: path: message` lines. */
export function parseOptions<Schema extends z.ZodType>(
  schema: Schema,
  options: unknown,
  call: string,
): z.output<Schema> {
  const parsed = schema.safeParse(options);
  if (!parsed.success) throw workerError('invalid_argument', `${call}: ${formatIssues(parsed.error.issues)}`);
  return parsed.data;
}
