import { createServer, type Server } from 'node:net';
import { CrewlineError } from '@crewline/events';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { startExplorer } from './explorer-server.js';

let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
let fixture: Fixture;
let taken: Server;
const registry = cliProviderRegistry();
const realSetInterval = globalThis.setInterval;

beforeAll(async () => {
  directory = await temporaryDirectory('crewline-serve-bind-');
  fixture = await writeFixture('json', directory.path);
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise((resolve) => taken?.close(resolve));
  await fixture?.provider.close?.();
  await registry.close();
  await directory?.remove();
});

it('refuses a port in use with a crewline error that names it, and leaves no timer running', async () => {
  const port = (taken.address() as { port: number }).port;
  const started: unknown[] = [];
  const setIntervalSpy = vi.spyOn(globalThis, 'setInterval').mockImplementation(((
    ...parameters: Parameters<typeof setInterval>
  ) => {
    const timer = realSetInterval(...parameters);
    started.push(timer);
    return timer;
  }) as typeof setInterval);
  const clearIntervalSpy = vi.spyOn(globalThis, 'clearInterval');
  try {
    const opened = await openLocation(fixture.location, directory.path, registry);
    await expect(startExplorer({ opened, providers: registry, cwd: directory.path, port })).rejects.toSatisfy(
      (error) =>
        CrewlineError.hasCode(error, 'conflict') &&
        error.message.includes(`port ${port}`) &&
        error.message.includes('--port'),
    );
    expect(started.length).toBeGreaterThan(0);
    for (const timer of started) expect(clearIntervalSpy).toHaveBeenCalledWith(timer);
  } finally {
    setIntervalSpy.mockRestore();
    clearIntervalSpy.mockRestore();
  }
});
