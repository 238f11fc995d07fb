import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { run } from '../support/commands.js';
import type { CheckContext } from '../support/context.js';
import { type UserProject, userEnvironment } from '../support/project.js';
import { runtimeAndCli } from '../support/user-scripts.js';

/** The page a new user follows for flows; its files are copied from it as written. */
const page = 'docs/flow-state-persistence.md';

/** The files the page gives in full: `<!-- file: name -->` and the code block after it. */
function pageFiles(markdown: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const match of markdown.matchAll(/<!-- file: ([\w.-]+) -->\n```\w*\n([\s\S]*?)\n```/g)) {
    files.set(match[1]!, `${match[2]!}\n`);
  }
  return files;
}

/**
 * The flow-state page (docs/flow-state-persistence.md) in a fresh npm project of runtime + CLI, with
 * no TypeScript loader installed in it: the page's `report-flow.ts`, `run.ts` and `crewline.config.ts`
 * (a Flow with standard decorators, registered by name). `run.ts` runs with tsx, as the page runs it
 * with `npx -y tsx` (this package's tsx, so no download); every `crewline` command is the installed
 * CLI, which loads the config through jiti.
 */
export async function flowConfigLoads(context: CheckContext): Promise<void> {
  const project = await context.project('flow-config');
  await project.install(context.tarballs(...runtimeAndCli));
  context.report(`install size, @crewline/runtime + @crewline/cli: ${await project.installSize()}`);
  const files = pageFiles(await readFile(join(context.workspaceRoot, page), 'utf8'));
  expect([...files.keys()].sort()).toEqual([
    'crewline.config.ts',
    'list-states.ts',
    'report-flow.ts',
    'run.ts',
  ]);
  for (const [name, text] of files) await project.write(name, text);

  const model = { CREWLINE_MODEL: 'offline:demo' };
  const failed = await tsx(context, project, ['run.ts', 'tides-report'], { ...model, FAIL_IN: 'Writer' });
  expect(failed.stdout).toContain('tides-report: stopped, the Writer step failed (FAIL_IN=Writer)');

  const flows = await project.bin('crewline', ['checkpoint', 'flows']);
  expect(flows.stderr).toBe('');
  expect(flows.code).toBe(0);
  expect(flows.stdout).toMatch(/^tides-report +ReportFlow +outline +running /m);

  const list = await project.bin('crewline', ['checkpoint', 'list']);
  expect(list.stderr).toBe('');
  expect(list.code).toBe(0);
  expect(list.stdout).toContain('flow-states/tides-report');

  const completed = await tsx(context, project, ['run.ts', 'tides-report'], model);
  expect(completed.stdout).toContain('tides-report: completed, completed research, outline, draft, edit');

  // The CLI runs a method of the flow class it found through crewline.config.ts.
  const rerun = await project.bin(
    'crewline',
    ['checkpoint', 'flows', 'rerun', 'tides-report', '--from', 'edit'],
    model,
  );
  expect(rerun.code, `${rerun.stdout}\n${rerun.stderr}`).toBe(0);
  expect(rerun.stdout).toContain('Re-running flow state tides-report from edit');
  expect(rerun.stdout).toContain('method edit finished');
  expect(rerun.stdout).toMatch(/^Finished flow ReportFlow on branch fork\//m);
  expect(rerun.stderr).not.toContain('could not load');
}

/** `npx -y tsx <args>` in the project, with this package's tsx. */
async function tsx(
  context: CheckContext,
  project: UserProject,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ stdout: string }> {
  const result = await run(join(context.binaries, 'tsx'), args, {
    cwd: project.directory,
    env: userEnvironment(env),
  });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result;
}
