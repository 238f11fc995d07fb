import { expect, it } from 'vitest';
import { describeAttempts } from './runs.js';

// Deploy trial: a run failed by its timeout showed "failed 0 of at most 5" beside status failed.
it('says a run failed for good was not retried, instead of 0 failures', () => {
  const line = describeAttempts({ attempts: 1, failures: 0, maxAttempts: 5, status: 'failed' });
  expect(line).toBe(
    '1 (failed for good, not retried: see error; 0 failed of at most 5 before the run fails)',
  );
  expect(line).not.toContain('(failed 0 of at most 5)');
});

it('counts the failures toward the limit otherwise', () => {
  expect(describeAttempts({ attempts: 3, failures: 1, maxAttempts: 5, status: 'running' })).toBe(
    '3 (1 failed of at most 5 before the run fails)',
  );
  expect(describeAttempts({ attempts: 5, failures: 5, maxAttempts: 5, status: 'failed' })).toBe(
    '5 (5 failed of at most 5 before the run fails)',
  );
});
