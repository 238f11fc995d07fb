import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run, runOrThrow } from './commands.js';

export interface PackedPackage {
  name: string;
  version: string;
  /** The package's directory in the workspace. */
  directory: string;
  tarball: string;
}

/** Every package under packages/ that is published (not `"private": true`). */
export async function publicPackages(workspaceRoot: string): Promise<{ name: string; directory: string }[]> {
  const root = join(workspaceRoot, 'packages');
  const found: { name: string; directory: string }[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const directory = join(root, entry.name);
    const manifest = JSON.parse(await readFile(join(directory, 'package.json'), 'utf8')) as {
      name: string;
      private?: boolean;
    };
    if (manifest.private !== true) found.push({ name: manifest.name, directory });
  }
  return found.sort((left, right) => left.name.localeCompare(right.name));
}

/**
 * Packs each public package with `pnpm pack`, as a release does: its `prepack` builds it (and what it
 * depends on) and `workspace:` ranges become versions.
 */
export async function packPublicPackages(
  workspaceRoot: string,
  destination: string,
  env: NodeJS.ProcessEnv,
): Promise<Map<string, PackedPackage>> {
  await mkdir(destination, { recursive: true });
  const packed = new Map<string, PackedPackage>();
  for (const { name, directory } of await publicPackages(workspaceRoot)) {
    const result = await runOrThrow('pnpm', ['pack', '--pack-destination', destination], {
      cwd: directory,
      env,
      timeoutMs: 240_000,
    });
    const tarball = result.stdout
      .trim()
      .split('\n')
      .map((line) => line.trim())
      .reverse()
      .find((line) => line.endsWith('.tgz'));
    if (!tarball) throw new Error(`pnpm pack in ${directory} printed no tarball:\n${result.stdout}`);
    const manifest = JSON.parse(await readFile(join(directory, 'package.json'), 'utf8')) as {
      version: string;
    };
    packed.set(name, { name, version: manifest.version, directory, tarball });
  }
  return packed;
}

/** Extracts a tarball into a new directory under `parent`; resolves to its `package/` directory. */
export async function extract(tarball: string, parent: string): Promise<string> {
  const directory = await mkdtemp(join(parent, 'extract-'));
  await runOrThrow('tar', ['-xzf', tarball, '-C', directory], { cwd: directory });
  return join(directory, 'package');
}

/** The list of files in a tarball, relative to the package root. */
export async function tarballFiles(tarball: string): Promise<string[]> {
  const result = await run('tar', ['-tzf', tarball], { cwd: '/' });
  return result.stdout
    .split('\n')
    .filter((line) => line.startsWith('package/') && !line.endsWith('/'))
    .map((line) => line.slice('package/'.length));
}

/** The same package under another version (what a user gets when the registry has a newer one). */
export async function repackWithVersion(
  packed: PackedPackage,
  version: string,
  parent: string,
): Promise<string> {
  const directory = await extract(packed.tarball, parent);
  const manifestPath = join(directory, 'package.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { version: string };
  manifest.version = version;
  await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  const tarball = join(parent, `${packed.name.replace('@', '').replace('/', '-')}-${version}.tgz`);
  await runOrThrow('tar', ['-czf', tarball, '-C', join(directory, '..'), 'package'], { cwd: parent });
  return tarball;
}
