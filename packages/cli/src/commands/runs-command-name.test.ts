// Trial s9: hints of `crewline runs …` said `crewline …` where the CLI ran through npx, where
// `crewline` is not on the PATH (the README: commands name the CLI as it was run).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';
import { forkOptions, forkRefusalInCliWords } from './runs-fork.js';
import { browserArguments } from './runs-open.js';
import { questionLines, resumeAnswer } from './runs-resume.js';

type RunRecord = import('@crewline/worker').RunRecord;

const paused = {
  id: 'run-1',
  status: 'paused',
  lineageId: null,
  lastCheckpoint: null,
  question: { methodName: 'review', message: 'Publish?' },
  humanInput: null,
} as unknown as RunRecord;

describe('runs hints name the CLI as it was run', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  beforeAll(async () => {
    project = await temporaryDirectory('crewline-runs-command-name-');
    mkdirSync(join(project.path, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(project.path, 'node_modules', '.bin', 'crewline'), '');
  });
  afterAll(() => project?.remove());

  it('an unknown runs subcommand names the help of the CLI as it was run', async () => {
    const result = await runCommand(['runs', 'lst'], {
      cwd: project.path,
      env: { npm_config_user_agent: 'npm/10.8.2 node/v20.20.2 linux x64', npm_command: 'exec' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('run `npx crewline runs --help`');
    expect(result.stderr).not.toMatch(/(?<!npx )crewline runs/);
  });

  it('an unknown option of checkpoint serve names the help of the CLI as it was run', async () => {
    const result = await runCommand(['checkpoint', 'serve', '--prot', '8080'], {
      cwd: project.path,
      env: { npm_config_user_agent: 'npm/10.8.2 node/v20.20.2 linux x64', npm_command: 'exec' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('npx crewline checkpoint serve --help');
  });

  it('answer, show, open and fork hints take the command', () => {
    expect(() => resumeAnswer({}, 'run-1', 'npx crewline')).toThrow(
      'npx crewline runs resume needs the answer: npx crewline runs resume run-1 --answer "..." (npx crewline runs show run-1 prints the question)',
    );
    expect(questionLines(paused, 'npx crewline')).toContain(
      'answer     npx crewline runs resume run-1 --answer "..."',
    );
    expect(() => browserArguments(paused, 'postgres://queue/db', 'npx crewline')).toThrow(
      '(npx crewline runs show run-1)',
    );
    expect(() => forkOptions({ 'set-output': ['x'] }, 'npx crewline')).toThrow(
      '(npx crewline checkpoint info shows them)',
    );
    const refusal = new CrewlineError('worker', 'invalid_argument', 'unknown input', {
      details: { unknownInput: 'topc', known: ['topic'], nearest: 'topic' },
    });
    expect((forkRefusalInCliWords(refusal, 'npx crewline') as Error).message).toContain(
      'queue a new run for new inputs with npx crewline runs enqueue',
    );
  });
});
