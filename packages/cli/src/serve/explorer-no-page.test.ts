import { mkdir, writeFile } from 'node:fs/promises';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { openEventStream } from '../test-support/event-stream.js';
import { writeFakeRun } from '../test-support/fake-crew.js';
import { type FixtureKind, providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';
import type { LineageGraph } from './lineage-graph.js';

// The JSON API read by a script, with no page open: nothing listens to the event stream, so nothing
// polls the location. Each answer must still be the store as it is when the request comes, not the
// listing the server took at start-up (trial T1 item 4: /api/graph kept answering an empty graph).
describe.each<FixtureKind>(['json', 'sqlite'])('the explorer API with no page open, over %s', (kind) => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let explorer: RunningExplorer;
  let writer: CheckpointProvider;
  let location: string;
  let listings: number;
  let restoreList: (() => void) | undefined;
  const registry = cliProviderRegistry();

  beforeEach(async () => {
    directory = await temporaryDirectory('crewline-serve-no-page-');
    writer = await providerOf(kind);
    location = `${directory.path}/${kind === 'json' ? '.checkpoints' : '.checkpoints.db'}`;
    // An empty location: a directory with nothing in it, a database file with nothing in it yet.
    if (kind === 'json') await mkdir(location);
    else await writeFile(location, '');
    const opened = await openLocation(location, directory.path, registry);
    listings = 0;
    const provider = opened.provider;
    const list = provider.list;
    // Counts the server's whole listings (a fork point's look-up lists one lineage, not counted), to
    // see that a listening page's requests still share one. The registry hands every test the same
    // provider, so the count is taken off again after each (or each listing would count once per test
    // that ran before).
    provider.list = (...parameters) => {
      if (parameters[1] === undefined) listings += 1;
      return list.apply(provider, parameters);
    };
    restoreList = () => {
      provider.list = list;
    };
    explorer = await startExplorer({
      opened,
      providers: registry,
      cwd: directory.path,
      // No tick within the test: only what a request does can make its answer current.
      pollIntervalMs: 600_000,
    });
  });
  afterEach(async () => {
    restoreList?.();
    await explorer?.close();
    await writer?.close?.();
    await directory?.remove();
  });
  afterAll(async () => {
    await registry.close();
  });

  const get = async (path: string) =>
    fetch(`http://127.0.0.1:${explorer.port}${path}`, { headers: { 'x-crewline-token': explorer.token } });
  const graph = async () => (await (await get('/api/graph')).json()) as LineageGraph;

  it('answers /api/graph with the checkpoints written since the last request', async () => {
    expect((await graph()).count).toBe(0);
    const written = await writeFakeRun({ provider: writer, location, taskCount: 2 });
    expect((await graph()).count).toBe(written.length);
    const more = await writeFakeRun({ provider: writer, location, crewName: 'Second', taskCount: 1 });
    expect((await graph()).count).toBe(written.length + more.length);
  });

  it('answers a checkpoint deleted since the last request as missing, and leaves it out of the graph', async () => {
    const written = await writeFakeRun({ provider: writer, location, taskCount: 2 });
    expect((await graph()).count).toBe(written.length);
    const deleted = written[1]!.id;
    expect((await get(`/api/checkpoints/${deleted}`)).status).toBe(200);
    expect(await writer.delete(writer.resolveLocation(location), deleted)).toBe(true);
    expect((await graph()).count).toBe(written.length - 1);
    const missing = await get(`/api/checkpoints/${deleted}`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toContain(deleted);
  });

  // Review RF-6: a script reading checkpoints one by one paid a listing of the whole store per request
  // (10,000 SQLite checkpoints: 80 ms each). A complete id is read directly, written or deleted since
  // the last request alike.
  it('reads a checkpoint named by its complete id without listing the store', async () => {
    const written = await writeFakeRun({ provider: writer, location, taskCount: 2 });
    const before = listings;
    let sequence = 0;
    for (const checkpoint of written) {
      const answer = await get(`/api/checkpoints/${checkpoint.id}`);
      expect(answer.status).toBe(200);
      const detail = (await answer.json()) as { metadata: { id: string }; events: { sequence: number }[] };
      expect(detail.metadata.id).toBe(checkpoint.id);
      sequence = detail.events[0]!.sequence;
    }
    expect((await get(`/api/checkpoints/${written.at(-1)!.id}/events/${sequence}`)).status).toBe(200);
    expect((await get(`/api/diff?a=${written[0]!.id}&b=${written[1]!.id}`)).status).toBe(200);
    const more = await writeFakeRun({ provider: writer, location, crewName: 'Second', taskCount: 1 });
    expect((await get(`/api/checkpoints/${more[0]!.id}`)).status).toBe(200);
    expect(await writer.delete(writer.resolveLocation(location), more[0]!.id)).toBe(true);
    expect((await get(`/api/checkpoints/${more[0]!.id}`)).status).toBe(404);
    expect(listings).toBe(before);
  });

  it('lists the store for a short id, once for both checkpoints of a diff', async () => {
    const written = await writeFakeRun({ provider: writer, location, taskCount: 2 });
    const short = (id: string) => id.slice(id.lastIndexOf('-') + 1);
    let before = listings;
    expect((await get(`/api/checkpoints/${short(written[1]!.id)}`)).status).toBe(200);
    expect(listings).toBe(before + 1);
    before = listings;
    const diff = await get(`/api/diff?a=${short(written[0]!.id)}&b=${short(written[1]!.id)}`);
    expect(diff.status).toBe(200);
    expect(listings).toBe(before + 1);
  });

  it('answers from the listing it keeps while a page listens, and afresh when the first page connects', async () => {
    const written = await writeFakeRun({ provider: writer, location, taskCount: 2 });
    expect((await graph()).count).toBe(written.length);
    const more = await writeFakeRun({ provider: writer, location, crewName: 'Second', taskCount: 1 });
    const stream = await openEventStream(explorer.port, explorer.token);
    try {
      await stream.next((event) => event.event === 'hello');
      // Nothing watched the location before this page: its first graph is the store as it is now.
      expect((await graph()).count).toBe(written.length + more.length);
      // From now on the watch keeps the listing (its tick drops it on a change): requests share it.
      const before = listings;
      await graph();
      await get(`/api/checkpoints/${written[0]!.id}`);
      expect(listings).toBe(before);
    } finally {
      stream.close();
    }
  });
});
