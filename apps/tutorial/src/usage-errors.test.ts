import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from '../e2e/support/processes.js';
import { parseTutorialOptions } from './options.js';

// The trial: `--latency abc` named CREWLINE_TUTORIAL_LATENCY_MS instead of the option, a misspelt
// option got no "did you mean", and usage errors exited 1 where the crewline CLI exits 2.

function refusal(argv: string[], env: Record<string, string> = {}): string {
  try {
    parseTutorialOptions(argv, env);
  } catch (error) {
    expect(CrewlineError.hasCode(error, 'invalid_argument')).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

describe('the demo usage errors', () => {
  it('names --latency, not the environment variable, for a --latency that is not a number', () => {
    const message = refusal(['--latency', 'abc']);
    expect(message).toContain('--latency "abc" is not a number of milliseconds');
    expect(message).not.toContain('CREWLINE_TUTORIAL_LATENCY_MS');
    expect(message).toContain('pnpm demo --help');
  });

  it('still names the variable when it is the variable that is wrong', () => {
    expect(() => parseTutorialOptions([], { CREWLINE_TUTORIAL_LATENCY_MS: 'abc' })).toThrow(
      /CREWLINE_TUTORIAL_LATENCY_MS="abc" is not a number of milliseconds/,
    );
  });

  it('suggests the nearest option for a misspelt one, and none for a word far from every option', () => {
    const message = refusal(['--edit-reserch', 'x']);
    expect(message).toMatch(
      /^\[tutorial\] Unknown option '--edit-reserch' \(did you mean --edit-research\?\); run `pnpm demo --help`$/,
    );
    expect(refusal(['--frobnicate'])).not.toContain('did you mean');
  });
});

describe('pnpm demo with a usage error', () => {
  let base: string;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'crewline-demo-usage-'));
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('exits 2, as crewline does, with one line naming the option', async () => {
    const options = { base, latencyMs: 0, callsFile: join(base, 'calls.json') };
    for (const [args, expected] of [
      [['--latency', 'abc'], /^demo: \[tutorial\] --latency "abc" is not a number/],
      [['--edit-reserch', 'x'], /did you mean --edit-research\?/],
    ] as const) {
      const { code, stderr } = await startDemo(args, options).finished;
      expect(stderr, args.join(' ')).toMatch(expected);
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(code, args.join(' ')).toBe(2);
    }
  });
});
