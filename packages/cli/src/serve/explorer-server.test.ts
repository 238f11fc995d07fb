import { request as httpRequest } from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContinuationPlan } from '../core/continuation-plan.js';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { openEventStream } from '../test-support/event-stream.js';
import { type Fixture, type FixtureKind, writeFixture } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import type { CheckpointComparison } from './checkpoint-comparison.js';
import type { CheckpointDetail } from './checkpoint-detail.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';
import type { LineageGraph } from './lineage-graph.js';

/** A raw HTTP request, so the Host header can be anything (fetch does not let a caller set it). */
function rawRequest(
  port: number,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}

/**
 * A POST of `chunks` on a connection of its own (the server answers an oversized body before reading
 * it and closes the connection, which a pooled one would then reuse); without `length`, chunked.
 */
function rawPost(
  port: number,
  path: string,
  headers: Record<string, string>,
  chunks: Buffer[],
  length?: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        headers: { ...headers, ...(length !== undefined ? { 'content-length': String(length) } : {}) },
      },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    // Writing the rest of a body the server has refused may fail: the answer is what is checked.
    request.on('error', reject);
    for (const chunk of chunks) request.write(chunk, () => undefined);
    request.end();
  });
}

describe.each<FixtureKind>(['json', 'sqlite'])('crewline checkpoint serve over %s', (kind) => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;
  let explorer: RunningExplorer;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-serve-');
    fixture = await writeFixture(kind, directory.path);
    explorer = await startExplorer({
      opened: await openLocation(fixture.location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
      // As under pnpm: what the explorer says names the CLI as it was run.
      command: 'pnpm crewline',
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await fixture?.provider.close?.();
    await registry.close();
    await directory?.remove();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${explorer.port}${path}`, {
      headers: { 'x-crewline-token': explorer.token, ...headers },
    });

  it('binds 127.0.0.1 and prints a URL with its token in the fragment, which no server receives', () => {
    expect(explorer.hostname).toBe('127.0.0.1');
    expect(explorer.url).toBe(`http://127.0.0.1:${explorer.port}/#token=${explorer.token}`);
    expect(explorer.token.length).toBeGreaterThanOrEqual(32);
  });

  it('refuses an API request without the token, or with a wrong one (401)', async () => {
    for (const path of ['/api/session', '/api/graph', '/api/events', '/api/runs']) {
      const response = await fetch(`http://127.0.0.1:${explorer.port}${path}`);
      expect(response.status, path).toBe(401);
    }
    const wrong = await fetch(`http://127.0.0.1:${explorer.port}/api/graph`, {
      headers: { 'x-crewline-token': 'x'.repeat(32) },
    });
    expect(wrong.status).toBe(401);
  });

  it('takes the token in the query of the event stream only (an EventSource cannot set a header)', async () => {
    const withQuery = (path: string) =>
      fetch(
        `http://127.0.0.1:${explorer.port}${path}${path.includes('?') ? '&' : '?'}token=${explorer.token}`,
      );
    expect((await withQuery('/api/graph')).status).toBe(401);
    expect((await withQuery('/api/session')).status).toBe(401);
    const controller = new AbortController();
    const stream = await fetch(`http://127.0.0.1:${explorer.port}/api/events?token=${explorer.token}`, {
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    controller.abort();
  });

  it('answers a browser opening an API address without the token with a page that says why, not JSON', async () => {
    const stale = await fetch(`http://127.0.0.1:${explorer.port}/api/graph`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(stale.status).toBe(401);
    expect(stale.headers.get('content-type')).toContain('text/html');
    const body = await stale.text();
    expect(body).toContain(
      'this explorer needs its token: open the URL `pnpm crewline checkpoint serve` printed',
    );
    expect(body).toContain('each start prints a new one');
    expect(body).not.toContain('<script');
    // The page's own requests (and any script) still get JSON.
    const api = await fetch(`http://127.0.0.1:${explorer.port}/api/graph`);
    expect(api.headers.get('content-type')).toContain('application/json');
  });

  it('refuses a foreign Origin and a Host that is not 127.0.0.1 or localhost with its port (403)', async () => {
    const foreign = await get('/api/graph', { origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const otherPort = await get('/api/graph', { origin: `http://127.0.0.1:${explorer.port + 1}` });
    expect(otherPort.status).toBe(403);
    const rebound = await rawRequest(explorer.port, '/api/graph', {
      host: `evil.example:${explorer.port}`,
      'x-crewline-token': explorer.token,
    });
    expect(rebound.status).toBe(403);
    // The page holds no data, but is not served to a rebound name or another site either.
    for (const path of ['/', '/assets/app.js']) {
      const page = await rawRequest(explorer.port, path, { host: `evil.example:${explorer.port}` });
      expect(page.status, path).toBe(403);
      const crossSite = await rawRequest(explorer.port, path, {
        host: `127.0.0.1:${explorer.port}`,
        'sec-fetch-site': 'cross-site',
      });
      expect(crossSite.status, path).toBe(403);
    }
    const localhost = await rawRequest(explorer.port, '/api/graph', {
      host: `localhost:${explorer.port}`,
      'x-crewline-token': explorer.token,
      origin: `http://localhost:${explorer.port}`,
    });
    expect(localhost.status).toBe(200);
    expect(localhost.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('serves the page and its files without the token (they hold no data), and sets no cookie', async () => {
    // Found by a review: the token was a cookie, which a browser sends to every port of the host.
    const page = await fetch(`http://127.0.0.1:${explorer.port}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('crewline lineage');
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const script = await fetch(`http://127.0.0.1:${explorer.port}/assets/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('text/javascript');
    expect(script.headers.get('set-cookie')).toBeNull();
    // An old printed URL (`?token=`) still gets the page, which takes the token from it.
    expect((await fetch(`http://127.0.0.1:${explorer.port}/?token=${explorer.token}`)).status).toBe(200);
  });

  it('answers a body over the 4 MiB limit with 413 and a message naming the limit', async () => {
    // Found by a review: 500 {"error":""}.
    const headers = { 'x-crewline-token': explorer.token, 'content-type': 'application/json' };
    const chunks = Array.from({ length: 5 }, () => Buffer.alloc(1_000_000, 97));
    for (const path of [`/api/checkpoints/${fixture.fork.id}/plan`, '/api/runs']) {
      // With its length announced, and sent in chunks with no length (counted as it comes).
      for (const length of [5_000_000, undefined]) {
        const response = await rawPost(explorer.port, path, headers, chunks, length);
        expect(response.status, `${path} ${length}`).toBe(413);
        expect((JSON.parse(response.body) as { error: string }).error).toBe(
          "[cli] checkpoint serve: the request body is over the explorer's limit of 4 MiB (4194304 bytes); send shorter inputs and task outputs",
        );
      }
    }
  });

  it('refuses resume and fork on a read-only server (403)', async () => {
    const response = await fetch(`http://127.0.0.1:${explorer.port}/api/runs`, {
      method: 'POST',
      headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
      body: JSON.stringify({ checkpoint: fixture.main[2]!.id, mode: 'fork' }),
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: string }).error).toContain(
      'start it with `pnpm crewline checkpoint serve --allow-resume`',
    );
  });

  it('tells the page how the CLI was run, for the words it shows', async () => {
    expect(await (await get('/api/session')).json()).toMatchObject({ command: 'pnpm crewline' });
  });

  it('a change needs the token header: not a query parameter, not a cookie', async () => {
    for (const headers of [{}, { cookie: `crewline_explorer_${explorer.port}=${explorer.token}` }] as Record<
      string,
      string
    >[]) {
      const response = await fetch(`http://127.0.0.1:${explorer.port}/api/runs?token=${explorer.token}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(response.status).toBe(401);
    }
  });

  it('lays out both branches, the fork drawn from the checkpoint it came from', async () => {
    const graph = (await (await get('/api/graph')).json()) as LineageGraph;
    const lanes = graph.groups[0]!.lanes;
    expect(lanes.map((lane) => lane.branch)).toEqual(['main', 'experiment']);
    expect(lanes[1]!.forkedFrom).toBe(fixture.main[2]!.id);
    expect(graph.count).toBe(fixture.main.length + 1);
  });

  it('shows a checkpoint: inputs, tasks with whole outputs, events', async () => {
    const detail = (await (await get(`/api/checkpoints/${fixture.fork.id}`)).json()) as CheckpointDetail;
    expect(detail.metadata.branch).toBe('experiment');
    expect(detail.inputs).toEqual({ topic: 'AI', audience: 'engineers' });
    const tasks = detail.entities[0]!.tasks;
    expect(tasks.map((task) => task.status)).toEqual(['completed', 'completed', 'pending']);
    expect(tasks[1]!.output).toBe('Forked output on experiment');
    expect(tasks[0]!.output).toContain('Second line of task 1.');
    expect(detail.events.length).toBeGreaterThan(0);
    const missing = await get('/api/checkpoints/nope');
    expect(missing.status).toBe(404);
  });

  it('says which tasks a continuation will run, with the rebuild rules of a real one (read-only too)', async () => {
    const plan = async (outputs: unknown) =>
      fetch(`http://127.0.0.1:${explorer.port}/api/checkpoints/${fixture.fork.id}/plan`, {
        method: 'POST',
        headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
        body: JSON.stringify({ outputs }),
      });
    const untouched = (await (await plan([])).json()) as ContinuationPlan;
    expect(untouched).toEqual({
      edited: [],
      inputsChanged: false,
      runs: [expect.objectContaining({ number: 3, reason: 'unfinished' })],
    });
    const edited = (await (await plan(['1=New research'])).json()) as ContinuationPlan;
    expect(edited.edited).toEqual([1]);
    expect(edited.runs.map((task) => [task.number, task.reason])).toEqual([
      [2, 'invalidated'],
      [3, 'unfinished'],
    ]);
    const pending = await plan(['3=Not yet written']);
    expect(pending.status).toBe(400);
    expect(((await pending.json()) as { error: string }).error).toContain('only completed task outputs');
    expect((await plan('1=text')).status).toBe(400);
  });

  it('refuses to plan what the run request would refuse: an edit that leaves nothing to run (400, its message)', async () => {
    // Found by a review: the plan only checked the inputs, so it answered 200 for a continuation the
    // run request then refused.
    const finished = fixture.main.at(-1)!.id;
    const plan = (body: object) =>
      fetch(`http://127.0.0.1:${explorer.port}/api/checkpoints/${finished}/plan`, {
        method: 'POST',
        headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const error = async (response: Response) => {
      expect(response.status).toBe(400);
      return ((await response.json()) as { error: string }).error;
    };
    // The last task's edit leaves no later task to run again, in either mode.
    expect(await error(await plan({ outputs: ['3=Other ending'] }))).toMatch(
      /nothing to run: .*so the resume would write no checkpoint;/,
    );
    expect(await error(await plan({ outputs: ['3=Other ending'], mode: 'fork' }))).toMatch(
      /nothing to run: .*so the fork would write no checkpoint and make no branch;/,
    );
    // A resume of a finished run gives its output back; a fork of it is refused.
    expect((await plan({})).status).toBe(200);
    const forkRefused = await error(await plan({ mode: 'fork' }));
    expect(forkRefused).toMatch(/nothing to run/);
    // In the page's words: its form, not the library's option or the CLI's flag.
    expect(forkRefused).toContain("edit a task's output in the form");
    expect(forkRefused).not.toContain('taskOutputs');
    expect(await error(await plan({ mode: 'rerun' }))).toBe('[cli] mode must be "resume" or "fork"');
    expect((await plan({ outputs: ['2=Other middle'], mode: 'fork' })).status).toBe(200);
  });

  it('refuses to plan with an input the run does not know, as a run request is refused (400)', async () => {
    const plan = async (inputs: string[]) =>
      fetch(`http://127.0.0.1:${explorer.port}/api/checkpoints/${fixture.fork.id}/plan`, {
        method: 'POST',
        headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
        body: JSON.stringify({ inputs }),
      });
    const misspelt = await plan(['topc=x']);
    expect(misspelt.status).toBe(400);
    expect(((await misspelt.json()) as { error: string }).error).toMatch(
      /input "topc" is not one the run knows \(known: audience, topic\); check its spelling/,
    );
    const known = await plan(['topic=reefs']);
    expect(known.status).toBe(200);
    expect(((await known.json()) as ContinuationPlan).runs).toEqual([
      expect.objectContaining({ number: 3, reason: 'unfinished' }),
    ]);
  });

  it('compares two checkpoints with the CLI diff, outputs as side-by-side lines', async () => {
    const a = fixture.main[3]!.id;
    const b = fixture.fork.id;
    const diff = (await (await get(`/api/diff?a=${a}&b=${b}`)).json()) as CheckpointComparison;
    expect(diff.from).toBe(a);
    expect(diff.fields.map((field) => field.field)).toContain('branch');
    const task = diff.tasks.find((change) => change.index === 1)!;
    expect(task.outputChanged).toBe(true);
    expect(task.rows[0]).toEqual({
      left: 'Output 2: findings about AI.',
      right: 'Forked output on experiment',
      kind: 'changed',
    });
    expect(task.rows[1]).toEqual({ left: 'Second line of task 2.', kind: 'removed' });
  });
});

describe('crewline checkpoint serve --host', () => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;
  let explorer: RunningExplorer;
  const registry = cliProviderRegistry();
  // An address of this machine other machines could use (none on a machine with loopback only).
  const external = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .find((entry) => !entry.internal && entry.family === 'IPv4')?.address;

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-serve-host-');
    fixture = await writeFixture('json', directory.path);
    explorer = await startExplorer({
      opened: await openLocation(fixture.location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
      host: '0.0.0.0',
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await fixture?.provider.close?.();
    await registry.close();
    await directory?.remove();
  });

  it('listens where it is told, says it is not loopback only, and prints a URL another machine can open', () => {
    expect(explorer.hostname).toBe('0.0.0.0');
    expect(explorer.loopbackOnly).toBe(false);
    expect(explorer.url).not.toContain('0.0.0.0');
    if (external) expect(explorer.url).toBe(`http://${external}:${explorer.port}/#token=${explorer.token}`);
  });

  it('still refuses a request without the token, a foreign Origin, a foreign Host, and resume when read-only', async () => {
    const path = '/api/graph';
    const tokenHeader = { 'x-crewline-token': explorer.token };
    expect(
      (await rawRequest(explorer.port, '/api/graph', { host: `127.0.0.1:${explorer.port}` })).status,
    ).toBe(401);
    const foreignHost = await rawRequest(explorer.port, path, {
      host: `evil.example:${explorer.port}`,
      ...tokenHeader,
    });
    expect(foreignHost.status).toBe(403);
    const allInterfaces = await rawRequest(explorer.port, path, {
      host: `0.0.0.0:${explorer.port}`,
      ...tokenHeader,
    });
    expect(allInterfaces.status).toBe(403);
    const foreignOrigin = await rawRequest(explorer.port, path, {
      ...tokenHeader,
      host: `127.0.0.1:${explorer.port}`,
      origin: 'http://evil.example',
    });
    expect(foreignOrigin.status).toBe(403);
    expect(foreignOrigin.headers['access-control-allow-origin']).toBeUndefined();
    const resume = await fetch(`http://127.0.0.1:${explorer.port}/api/runs`, {
      method: 'POST',
      headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
      body: JSON.stringify({ checkpoint: fixture.main[2]!.id, mode: 'resume' }),
    });
    expect(resume.status).toBe(403);
  });

  it.skipIf(external === undefined)('answers a request that names this machine by its address', async () => {
    const page = await rawRequest(explorer.port, '/api/session', {
      'x-crewline-token': explorer.token,
      host: `${external}:${explorer.port}`,
      origin: `http://${external}:${explorer.port}`,
    });
    expect(page.status).toBe(200);
  });
});

describe.each<FixtureKind>(['json', 'sqlite'])('live updates over %s', (kind) => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;
  let explorer: RunningExplorer;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-serve-live-');
    fixture = await writeFixture(kind, directory.path);
    explorer = await startExplorer({
      opened: await openLocation(fixture.location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
      pollIntervalMs: 50,
      listIntervalMs: 100,
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await fixture?.provider.close?.();
    await registry.close();
    await directory?.remove();
  });

  const graph = async () =>
    (await (
      await fetch(`http://127.0.0.1:${explorer.port}/api/graph`, {
        headers: { 'x-crewline-token': explorer.token },
      })
    ).json()) as LineageGraph;

  it('tells the page when another process deletes a checkpoint that is not the newest, and the graph loses it', async () => {
    const stream = await openEventStream(explorer.port, explorer.token);
    try {
      await stream.next((event) => event.event === 'hello');
      expect((await graph()).count).toBe(fixture.main.length + 1);
      // Another process (its own provider instance) deletes a middle checkpoint of main.
      const other = await (await import('../test-support/fixtures.js')).providerOf(kind);
      const victim = fixture.main[1]!.id;
      expect(await other.delete(other.resolveLocation(fixture.location), victim)).toBe(true);
      await other.close?.();
      const change = await stream.next(
        (event) =>
          event.event === 'checkpoints' && (event.data as { removed: string[] }).removed.includes(victim),
      );
      expect(change.data).toEqual({ latest: expect.any(String), removed: [victim] });
      const after = await graph();
      expect(after.count).toBe(fixture.main.length);
      const shown = after.groups.flatMap((group) =>
        group.lanes.flatMap((lane) => lane.nodes.flatMap((node) => node.ids)),
      );
      expect(shown).not.toContain(victim);
    } finally {
      stream.close();
    }
  });
});
