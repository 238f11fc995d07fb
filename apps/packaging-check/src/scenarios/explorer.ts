import { expect } from 'vitest';
import type { UserProject } from '../support/project.js';

/** The module imports of one of the page's scripts (`from './graph.js'`), as asset paths. */
function importedAssets(script: string): string[] {
  return [...script.matchAll(/\bfrom\s+['"]\.\/([\w.-]+\.js)['"]/g)].map((match) => `/assets/${match[1]}`);
}

/**
 * `crewline checkpoint serve` from the installed tarball, on the checkpoints the project holds: the
 * printed URL carries its token in the fragment; the page, every script and style it loads and every
 * module those scripts import come back 200 without a token and with no cookie set (they hold no
 * data), the graph API refuses a request without the token and counts `checkpointCount` checkpoints
 * with it in the `x-crewline-token` header, and SIGTERM stops it with exit 0.
 */
export async function explorerServes(project: UserProject, checkpointCount: number): Promise<void> {
  const server = project.startBin('crewline', ['checkpoint', 'serve']);
  let exitCode: number | null;
  try {
    const [, address] = await server.waitFor(/open (http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+)/);
    const url = new URL(address!);
    const token = new URLSearchParams(url.hash.slice(1)).get('token')!;
    const page = await fetch(url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('crewline lineage explorer');
    expect(page.headers.get('set-cookie')).toBeNull();

    const pending = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(pending).toEqual(expect.arrayContaining(['/assets/app.js', '/assets/style.css']));
    const fetched = new Map<string, number>();
    while (pending.length > 0) {
      const asset = pending.shift()!;
      if (fetched.has(asset)) continue;
      const response = await fetch(new URL(asset, url));
      fetched.set(asset, response.status);
      const body = await response.text();
      if (asset.endsWith('.js')) pending.push(...importedAssets(body));
    }
    // app.js imports the page's other modules; each one is in the tarball's explorer-page/.
    expect(fetched.size).toBeGreaterThan(3);
    expect(Object.fromEntries(fetched)).toEqual(
      Object.fromEntries([...fetched.keys()].map((asset) => [asset, 200])),
    );

    expect((await fetch(new URL('/api/graph', url))).status).toBe(401);
    const graph = await fetch(new URL('/api/graph', url), { headers: { 'x-crewline-token': token } });
    expect(graph.status).toBe(200);
    expect(((await graph.json()) as { count: number }).count).toBe(checkpointCount);
  } finally {
    exitCode = await server.stop('SIGTERM');
  }
  expect(exitCode, server.stderr).toBe(0);
  expect(server.stderr).toBe('');
}
