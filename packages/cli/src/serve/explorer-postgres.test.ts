import { PostgresProvider } from '@crewline/provider-postgres';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, expect, it } from 'vitest';
// The Postgres server of provider-postgres's own tests (see vitest.config.ts), through the workspace.
import type {} from '../../node_modules/@crewline/provider-postgres/src/test-support/global-setup.js';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
} from '../../node_modules/@crewline/provider-postgres/src/test-support/test-server.js';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { openEventStream } from '../test-support/event-stream.js';
import { writeFakeFork, writeFakeRun } from '../test-support/fake-crew.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';
import type { LineageGraph } from './lineage-graph.js';

describeWithPostgres('crewline checkpoint serve over a Postgres location', () => {
  let url: string;
  let main: StoredCheckpoint[];
  let explorer: RunningExplorer;
  const writer = new PostgresProvider({ poolSize: 2 });
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    url = temporaryLocation();
    const location = writer.resolveLocation(url);
    main = await writeFakeRun({ provider: writer, location, taskCount: 2 });
    await writeFakeFork(writer, location, main[1]!, 'experiment');
    explorer = await startExplorer({
      opened: await openLocation(url, process.cwd(), registry),
      providers: registry,
      cwd: process.cwd(),
      pollIntervalMs: 50,
      listIntervalMs: 100,
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await registry.close();
    await writer.close();
    await dropLocation(url);
  });

  it('draws its branches and opens a checkpoint, never showing the password of the URL', async () => {
    const get = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${explorer.port}${path}`, {
        headers: { 'x-crewline-token': explorer.token },
      });
      expect(response.status, path).toBe(200);
      return response.text();
    };
    const graph = JSON.parse(await get('/api/graph')) as LineageGraph;
    expect(graph.groups[0]!.lanes.map((lane) => lane.branch)).toEqual(['main', 'experiment']);
    const password = decodeURIComponent(new URL(url).password);
    const texts = [
      await get('/api/session'),
      JSON.stringify(graph),
      await get(`/api/checkpoints/${main[1]!.id}`),
      await get(`/api/diff?a=${main[0]!.id}&b=${main[1]!.id}`),
    ];
    expect(JSON.parse(texts[0]!)).toMatchObject({ provider: 'postgres' });
    if (password !== '') for (const text of texts) expect(text).not.toContain(password);
  });

  it('drops a checkpoint another process deleted from the graph and tells the page which', async () => {
    const stream = await openEventStream(explorer.port, explorer.token);
    try {
      await stream.next((event) => event.event === 'hello');
      const victim = main[0]!.id;
      expect(await writer.delete(writer.resolveLocation(url), victim)).toBe(true);
      const change = await stream.next(
        (event) =>
          event.event === 'checkpoints' && (event.data as { removed: string[] }).removed.includes(victim),
      );
      expect((change.data as { removed: string[] }).removed).toEqual([victim]);
      const response = await fetch(`http://127.0.0.1:${explorer.port}/api/graph`, {
        headers: { 'x-crewline-token': explorer.token },
      });
      const graph = (await response.json()) as LineageGraph;
      const shown = graph.groups.flatMap((group) =>
        group.lanes.flatMap((lane) => lane.nodes.flatMap((node) => node.ids)),
      );
      expect(shown).not.toContain(victim);
      // The checkpoint after it now starts from a parent that is not in storage: drawn as pruned.
      expect(shown).toContain(main[1]!.id);
    } finally {
      stream.close();
    }
  });
});
