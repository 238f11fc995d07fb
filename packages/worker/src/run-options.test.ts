import { CrewlineError } from '@crewline/events';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { parseOptions, runLimitsSchema } from './run-options.js';

it('refuses unknown and invalid options with path: message lines naming the call', () => {
  const schema = runLimitsSchema.extend({ inputs: z.record(z.string(), z.unknown()).optional() });
  expect(parseOptions(schema, { priority: 3 }, 'enqueue("report")')).toEqual({ priority: 3 });
  expect(() => parseOptions(schema, { priority: 1.5, prioriti: 1 }, 'enqueue("report")')).toThrow(
    expect.toSatisfy(
      (error) =>
        CrewlineError.hasCode(error, 'invalid_argument') &&
        /^\[worker\] enqueue\("report"\): .*priority: must be a whole number/.test(error.message) &&
        /prioriti/.test(error.message),
    ),
  );
});
