import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { statusOf } from './http-status.js';

describe('the status of a failed explorer request', () => {
  it('is 422 for a checkpoint that exists but cannot be read, not a server error', () => {
    // A damaged event line, a newer format or an oversized document answered 500, as if the server broke.
    for (const code of ['corrupt_checkpoint', 'unsupported_version', 'too_large'] as const)
      expect(statusOf(new CrewlineError('provider-sqlite', code, 'checkpoint x is unreadable')), code).toBe(
        422,
      );
  });

  it('keeps 400, 404 and 409 for the caller, and 500 for everything else', () => {
    expect(statusOf(new CrewlineError('cli', 'invalid_argument', 'x'))).toBe(400);
    expect(statusOf(new CrewlineError('cli', 'not_found', 'x'))).toBe(404);
    expect(statusOf(new CrewlineError('cli', 'conflict', 'x'))).toBe(409);
    // A short id that names several checkpoints: the request conflicts with what is stored.
    expect(statusOf(new CrewlineError('cli', 'ambiguous_reference', 'x'))).toBe(409);
    expect(statusOf(new CrewlineError('cli', 'read_failed', 'x'))).toBe(500);
    expect(statusOf(new Error('boom'))).toBe(500);
  });
});
