import { readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import type { CheckContext } from '../support/context.js';
import { extract, tarballFiles } from '../support/tarballs.js';

interface Manifest {
  name: string;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  homepage?: string;
  bugs?: { url?: string };
  engines?: { node?: string };
  exports?: unknown;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

// One per process: each must be a peer, never a dependency that installs a copy of its own.
const singletonPackages = ['@crewline/events', '@crewline/runtime-state', 'zod'];

function exportTargets(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value === null || typeof value !== 'object') return [];
  return Object.values(value).flatMap(exportTargets);
}

/** What is wrong with one tarball, as lines (none when it is right). */
async function problemsOf(context: CheckContext, name: string): Promise<string[]> {
  const packed = context.packed.get(name)!;
  const files = new Set(await tarballFiles(packed.tarball));
  const root = await extract(packed.tarball, context.work);
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Manifest;
  const problems: string[] = [];
  const directory = `packages/${packed.directory.split('/').at(-1)}`;

  const license = await readFile(join(context.workspaceRoot, 'LICENSE'), 'utf8');
  if (!files.has('LICENSE')) problems.push('no LICENSE');
  else if ((await readFile(join(root, 'LICENSE'), 'utf8')) !== license)
    problems.push('LICENSE differs from the repository LICENSE');
  if (manifest.license !== 'MIT') problems.push(`license is ${manifest.license}, not MIT`);
  if (!manifest.repository?.url?.includes('github.com/crewline/crewline'))
    problems.push('repository.url missing or not github.com/crewline/crewline');
  if (manifest.repository?.directory !== directory) problems.push(`repository.directory is not ${directory}`);
  if (!manifest.homepage) problems.push('no homepage');
  if (!manifest.bugs?.url) problems.push('no bugs.url');
  if (!manifest.engines?.node) problems.push('no engines.node');

  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'] as const) {
    for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
      if (range.startsWith('workspace:')) problems.push(`${field}.${dependency} is ${range}`);
    }
  }
  for (const dependency of singletonPackages) {
    if (manifest.dependencies?.[dependency] !== undefined)
      problems.push(`${dependency} is a dependency; it must be a peer dependency (one copy per install)`);
  }

  for (const target of [...exportTargets(manifest.exports), ...Object.values(manifest.bin ?? {})]) {
    if (!files.has(normalize(target)))
      problems.push(`exports or bin point at ${target}, which is not in the tarball`);
  }

  // Source maps and declaration maps name the files they came from: each must ship.
  for (const file of files) {
    if (!file.endsWith('.map')) continue;
    const map = JSON.parse(await readFile(join(root, file), 'utf8')) as { sources?: string[] };
    for (const source of map.sources ?? []) {
      const shipped = normalize(join(dirname(file), source));
      if (!files.has(shipped)) problems.push(`${file} maps to ${shipped}, which is not in the tarball`);
    }
  }
  return problems.map((problem) => `${name}: ${problem}`);
}

/**
 * Every tarball: LICENSE, repository (with its directory), homepage, bugs, engines; no `workspace:`
 * range left; the one-per-process packages only as peers; every export target, bin and source-map
 * source present.
 */
export async function tarballContents(context: CheckContext): Promise<string[]> {
  const problems: string[] = [];
  for (const name of context.packed.keys()) problems.push(...(await problemsOf(context, name)));
  return problems;
}
