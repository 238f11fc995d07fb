import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { CapturedOutput } from '../test-support/run-command.js';
import { withErrorBoundary } from './error-boundary.js';

describe('withErrorBoundary', () => {
  it('escapes control characters a message quotes from a checkpoint (a tampered field value)', async () => {
    const stderr = new CapturedOutput();
    const code = await withErrorBoundary(async () => {
      throw new CrewlineError(
        'runtime-state',
        'corrupt_checkpoint',
        'field "trigger" is "\u001b]0;owned\u0007"',
      );
    }, stderr);
    expect(code).toBe(4);
    expect(stderr.text).toBe('crewline: field "trigger" is "\\x1b]0;owned\\x07"\n');
    const bug = new CapturedOutput();
    await withErrorBoundary(async () => {
      throw new Error('bad \u009b2J value');
    }, bug);
    expect(bug.text).toContain('bad \\x9b2J value');
  });

  it('a server that cannot be reached exits 7, whatever its code; a damaged checkpoint 4', async () => {
    const reach = (details?: Record<string, unknown>) =>
      withErrorBoundary(async () => {
        throw new CrewlineError('provider-postgres', 'read_failed', 'cannot reach the server', {
          ...(details ? { details } : {}),
        });
      }, new CapturedOutput());
    expect(await reach({ unreachable: true })).toBe(7);
    expect(await reach()).toBe(4);
  });
});
