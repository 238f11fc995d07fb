import { expect } from 'vitest';
import type { UserProject } from '../support/project.js';

/** The module imports of one of the page's scripts (`from './graph.js'`), as asset paths. */
function importedAssets(script: string): string[] {
  return [...script.matchAll(/\bfrom\s+['"]\.\/([\w.-]+\.js)['"]/g)].map((match) => `/assets/${match[1]}`);
}

/**
 * `crewline checkpoint serve` from the installed tarball, on the checkpoints the project holds: the
 * printed URL with its token gives the page (200), every script and style the page loads — and every
 * module those scripts import — comes back 200 with the cookie the page set (a request with no token
 * is refused), the graph API counts `checkpointCount` checkpoints, and SIGTERM stops it with exit 0.
 */
export async function explorerServes(project: UserProject, checkpointCount: number): Promise<void> {
  const server = project.startBin('crewline', ['checkpoint', 'serve']);
  let exitCode: number | null;
  try {
    const [, address] = await server.waitFor(/open (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/);
    const url = new URL(address!);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('crewline lineage explorer');
    const cookie = page.headers.get('set-cookie')?.split(';')[0];
    expect(cookie).toMatch(/^crewline_explorer_\d+=[\w-]+$/);

    const untokened = await fetch(new URL('/assets/app.js', url));
    expect(untokened.status).toBe(401);

    const pending = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(pending).toEqual(expect.arrayContaining(['/assets/app.js', '/assets/style.css']));
    const fetched = new Map<string, number>();
    while (pending.length > 0) {
      const asset = pending.shift()!;
      if (fetched.has(asset)) continue;
      const response = await fetch(new URL(asset, url), { headers: { cookie: cookie! } });
      fetched.set(asset, response.status);
      const body = await response.text();
      if (asset.endsWith('.js')) pending.push(...importedAssets(body));
    }
    // app.js imports the page's other modules; each one is in the tarball's explorer-page/.
    expect(fetched.size).toBeGreaterThan(3);
    expect(Object.fromEntries(fetched)).toEqual(
      Object.fromEntries([...fetched.keys()].map((asset) => [asset, 200])),
    );

    const graph = await fetch(new URL('/api/graph', url), { headers: { cookie: cookie! } });
    expect(graph.status).toBe(200);
    expect(((await graph.json()) as { count: number }).count).toBe(checkpointCount);
  } finally {
    exitCode = await server.stop('SIGTERM');
  }
  expect(exitCode, server.stderr).toBe(0);
  expect(server.stderr).toBe('');
}
