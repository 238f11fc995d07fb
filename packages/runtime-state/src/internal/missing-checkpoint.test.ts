import { describe, expect, it } from 'vitest';
import { missingCheckpointMessage } from './missing-checkpoint.js';

describe('missingCheckpointMessage', () => {
  it('names the location in the list command (found by a trial: the hint listed the default location)', () => {
    expect(missingCheckpointMessage('abc', '/tmp/x/.checkpoints')).toBe(
      'no checkpoint "abc" in /tmp/x/.checkpoints; run `crewline checkpoint list /tmp/x/.checkpoints` to see its ids',
    );
  });

  it('quotes a location the shell would split or expand', () => {
    expect(missingCheckpointMessage('abc', "/tmp/it's here.db")).toContain(
      "`crewline checkpoint list '/tmp/it'\\''s here.db'`",
    );
    expect(missingCheckpointMessage('abc', 'postgres://app@db:5432/agents?schema=x')).toContain(
      "`crewline checkpoint list 'postgres://app@db:5432/agents?schema=x'`",
    );
  });
});
