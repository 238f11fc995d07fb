import { describe, expect, it } from 'vitest';
import { runCommand } from '../test-support/run-command.js';
import { parseCommandArguments } from './args.js';

describe('parseCommandArguments', () => {
  const options = {
    location: { type: 'string' },
    json: { type: 'boolean' },
    branch: { type: 'string' },
  } as const;
  const refusal = (args: string[]) => {
    try {
      parseCommandArguments('checkpoint list', args, options, 1);
    } catch (error) {
      return error as Error & { code?: string };
    }
    throw new Error('expected a refusal');
  };

  it('names the option an unknown long option was probably meant to be', () => {
    const error = refusal(['--locaton', './x']);
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toBe(
      "[cli] Unknown option '--locaton' (did you mean --location?); run `crewline checkpoint list --help`",
    );
    expect(refusal(['--jsno']).message).toContain('(did you mean --json?)');
    expect(refusal(['--Branch=main']).message).toContain('(did you mean --branch?)');
  });

  it('guesses nothing when no option is within two edits, nor for a short option', () => {
    expect(refusal(['--verbose']).message).toBe(
      "[cli] Unknown option '--verbose'; run `crewline checkpoint list --help`",
    );
    expect(refusal(['-l']).message).not.toContain('did you mean');
  });

  it('says it on the command line, exit code 2', async () => {
    const result = await runCommand(['checkpoint', 'info', '--locaton', './nowhere'], { cwd: process.cwd() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("crewline: Unknown option '--locaton' (did you mean --location?)");
  });
});
