import { join } from 'node:path';
import { run } from '../support/commands.js';
import type { CheckContext } from '../support/context.js';
import { userEnvironment } from '../support/project.js';

/** `publint --strict` on every tarball: what it reports as a warning fails too. */
export async function publint(context: CheckContext): Promise<string[]> {
  const failures: string[] = [];
  for (const { name, tarball } of context.packed.values()) {
    const result = await run(join(context.binaries, 'publint'), ['run', tarball, '--strict'], {
      cwd: context.work,
      env: userEnvironment(),
    });
    if (result.code !== 0) failures.push(`${name}:\n${result.stdout}${result.stderr}`);
  }
  return failures;
}

/**
 * `@arethetypeswrong/cli` on every tarball, with the ESM-only profile (the packages are ESM only, so
 * `require` from CommonJS is out of scope): every entry point's types resolve under node16 ESM and
 * bundlers. Two at a time.
 */
export async function typesResolve(context: CheckContext): Promise<string[]> {
  const packages = [...context.packed.values()];
  const failures: string[] = [];
  const check = async () => {
    for (let next = packages.shift(); next !== undefined; next = packages.shift()) {
      const result = await run(
        join(context.binaries, 'attw'),
        [next.tarball, '--profile', 'esm-only', '--no-definitely-typed', '--format', 'ascii', '--no-color'],
        { cwd: context.work, env: userEnvironment() },
      );
      if (result.code !== 0) failures.push(`${next.name}:\n${result.stdout}${result.stderr}`);
    }
  };
  await Promise.all([check(), check()]);
  return failures;
}
