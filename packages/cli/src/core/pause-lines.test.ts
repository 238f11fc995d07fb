import { describe, expect, it } from 'vitest';
import { pauseLines } from './pause-lines.js';

const paused = {
  kind: 'flow',
  name: 'ReportFlow',
  pause: { methodName: 'review', message: 'Ship it?', resumeFrom: '/project/cp/x.json' },
};

describe('pauseLines', () => {
  it('names the CLI as it was run in the command that answers (s8 trial finding 3)', () => {
    expect(pauseLines(paused, '/project', 'npx crewline').at(-1)).toBe(
      'Answer with: npx crewline checkpoint resume ./cp/x.json --answer "..."',
    );
  });

  it('says crewline alone by default', () => {
    expect(pauseLines(paused, '/project').at(-1)).toBe(
      'Answer with: crewline checkpoint resume ./cp/x.json --answer "..."',
    );
  });
});
