import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

// Trials 2 and 3: an unknown /api path answered plain text "404 Not Found", where every other
// answer of the API, refusals included, is JSON with an `error`.
describe('an API path the explorer does not serve', () => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;
  let explorer: RunningExplorer;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-serve-');
    fixture = await writeFixture('json', directory.path);
    explorer = await startExplorer({
      opened: await openLocation(fixture.location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await fixture?.provider.close?.();
    await registry.close();
    await directory?.remove();
  });

  const call = (path: string, method = 'GET') =>
    fetch(`http://127.0.0.1:${explorer.port}${path}`, {
      method,
      headers: { 'x-crewline-token': explorer.token },
    });

  it('answers 404 with JSON naming the method and path', async () => {
    for (const [path, method] of [
      ['/api/nosuch', 'GET'],
      ['/api/checkpoints', 'GET'],
      ['/api/diff', 'POST'],
    ] as const) {
      const response = await call(path, method);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type'), path).toContain('application/json');
      const body = (await response.json()) as { error: string };
      expect(body.error, path).toContain(`${method} ${path}`);
    }
  });

  it('still refuses an unknown path without the token first (401)', async () => {
    const response = await fetch(`http://127.0.0.1:${explorer.port}/api/nosuch`);
    expect(response.status).toBe(401);
  });
});
