import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { publicPackages } from './support/tarballs.js';

/** The part of a package's manifest this check reads. */
export interface PeerManifest {
  name: string;
  peerDependencies?: Record<string, string>;
}

/**
 * One line per peer that two or more public packages declare with different ranges (none when they
 * agree). npm installs one copy of a peer for the whole project, so a version that fits one package's
 * range and not another's fails `npm install` with ERESOLVE: a project on zod 4.3.6 could not install
 * the runtime while its provider-json asked for ^4.6.7 and the runtime itself for ^4.2.0.
 */
export function peerRangeDisagreements(manifests: readonly PeerManifest[]): string[] {
  const rangesByPeer = new Map<string, Map<string, string[]>>();
  for (const manifest of manifests) {
    for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {})) {
      const packagesByRange = rangesByPeer.get(peer) ?? new Map<string, string[]>();
      packagesByRange.set(range, [...(packagesByRange.get(range) ?? []), manifest.name]);
      rangesByPeer.set(peer, packagesByRange);
    }
  }
  const problems: string[] = [];
  for (const [peer, packagesByRange] of [...rangesByPeer].sort(([left], [right]) =>
    left.localeCompare(right),
  )) {
    if (packagesByRange.size < 2) continue;
    const declared = [...packagesByRange]
      .map(([range, names]) => `${range} (${names.sort().join(', ')})`)
      .join(', ');
    problems.push(
      `peer ${peer} is declared with ${packagesByRange.size} ranges: ${declared}; declare one range in every public package (the lowest version that every package works with)`,
    );
  }
  return problems;
}

/** {@link peerRangeDisagreements} of the workspace's public packages, as their package.json files say. */
export async function workspacePeerRangeDisagreements(workspaceRoot: string): Promise<string[]> {
  const manifests: PeerManifest[] = [];
  for (const { directory } of await publicPackages(workspaceRoot)) {
    manifests.push(JSON.parse(await readFile(join(directory, 'package.json'), 'utf8')) as PeerManifest);
  }
  return peerRangeDisagreements(manifests);
}
