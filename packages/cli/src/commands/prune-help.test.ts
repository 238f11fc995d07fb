import { describe, expect, it } from 'vitest';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// The help of prune says what the command does: both options may be given together, and it names
// every checkpoint prune never removes (planPrune's rule), not only two of them.
describe('crewline checkpoint prune --help', () => {
  it('says --keep and --older-than go together and lists every checkpoint prune never removes', async () => {
    const project = await temporaryDirectory('crewline-prune-help-');
    try {
      const result = await runCommand(['checkpoint', 'prune', '--help'], { cwd: project.path });
      expect(result.code).toBe(0);
      const help = result.stdout.replace(/\s+/g, ' ');
      expect(help).toContain(
        'Usage: crewline checkpoint prune [LOCATION] --keep N and/or --older-than D [options]',
      );
      expect(help).toContain("Never removed: a run's latest checkpoint");
      expect(help).toContain('a checkpoint a fork started from');
      expect(help).toContain("a fork's first checkpoint");
    } finally {
      await project.remove();
    }
  });
});
