import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runOrThrow } from './commands.js';
import { UserProject, userEnvironment } from './project.js';
import { type PackedPackage, packPublicPackages, publicPackages } from './tarballs.js';

/** What every scenario gets: the packed tarballs and a place outside the workspace to use them. */
export interface CheckContext {
  workspaceRoot: string;
  /** A fresh directory under os.tmpdir(), removed at the end. */
  work: string;
  /** Kept between runs (under os.tmpdir()) so that npm fetches ai, zod and the rest once. */
  npmCache: string;
  /** Public package name → its tarball. */
  packed: Map<string, PackedPackage>;
  /** Binaries of this package's devDependencies (publint, attw). */
  binaries: string;
  /** A new user project in `work` (a name per scenario). */
  project(name: string): Promise<UserProject>;
  /** The tarballs of these packages, for `npm install`. */
  tarballs(...names: string[]): string[];
  /** Lines for the summary printed at the end (sizes, times). */
  report(line: string): void;
  readonly reportLines: string[];
  /** Build output (dist/, build info) that did not exist before the check, removed at its end. */
  readonly createdOutputs: readonly string[];
}

export async function prepareContext(): Promise<CheckContext> {
  const workspaceRoot = fileURLToPath(new URL('../../../../', import.meta.url));
  const work = await mkdtemp(join(tmpdir(), 'crewline-packaging-'));
  const npmCache = join(tmpdir(), 'crewline-packaging-npm-cache');
  await mkdir(npmCache, { recursive: true });
  const started = Date.now();
  // Build output this check makes, removed again at the end: a dist/ left behind goes stale with the
  // next source change, and bin/crewline.js in a source checkout prefers dist/ to src/.
  const outputs = await buildOutputs(workspaceRoot);
  const createdOutputs = outputs.filter((path) => !existsSync(path));
  let packed: Map<string, PackedPackage>;
  let built: number;
  try {
    // The tarballs must hold what the sources build to now. A dist/ already there (a developer's
    // checkout) may hold files whose source was renamed or deleted since, which `tsc -b` leaves in
    // place and `files: ["dist"]` packs; so every public package builds from nothing, and turbo's
    // cache is bypassed (--force), since it would restore a dist/ saved with such files in it.
    await removePaths(outputs);
    // One build of every package first (turbo runs them two at a time); each package's prepack then
    // runs the same turbo build and finds it done.
    await runOrThrow(
      'pnpm',
      ['exec', 'turbo', 'run', 'build', '--filter=./packages/*', '--force', '--output-logs=errors-only'],
      { cwd: workspaceRoot, env: userEnvironment(), timeoutMs: 300_000 },
    );
    built = Date.now();
    packed = await packPublicPackages(workspaceRoot, join(work, 'tarballs'), userEnvironment());
  } catch (error) {
    await removePaths(createdOutputs);
    throw error;
  }
  const reportLines = [
    `built in ${seconds(built - started)}, packed ${packed.size} packages in ${seconds(Date.now() - built)}`,
  ];
  return {
    workspaceRoot,
    work,
    npmCache,
    packed,
    binaries: fileURLToPath(new URL('../../node_modules/.bin/', import.meta.url)),
    project: (name) => UserProject.create(work, name, npmCache),
    tarballs: (...names) =>
      names.map((name) => {
        const found = packed.get(name);
        if (!found)
          throw new Error(`${name} was not packed; public packages: ${[...packed.keys()].join(', ')}`);
        return found.tarball;
      }),
    report: (line) => reportLines.push(line),
    reportLines,
    createdOutputs,
  };
}

/** Each public package's dist/ and build info. */
export async function buildOutputs(workspaceRoot: string): Promise<string[]> {
  return (await publicPackages(workspaceRoot)).flatMap(({ directory }) => [
    join(directory, 'dist'),
    join(directory, 'tsconfig.build.tsbuildinfo'),
  ]);
}

function removePaths(paths: readonly string[]): Promise<unknown> {
  return Promise.all(paths.map((path) => rm(path, { recursive: true, force: true })));
}

export async function removeContext(context: CheckContext | undefined): Promise<void> {
  if (!context) return;
  await removePaths(context.createdOutputs);
  if (process.env.CREWLINE_PACKAGING_KEEP !== '1') await rm(context.work, { recursive: true, force: true });
}

export function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(1)} s`;
}
