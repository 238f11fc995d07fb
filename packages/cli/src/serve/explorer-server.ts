import type { AddressInfo } from 'node:net';
import type { ModelPrices, ProviderRegistry } from '@crewline/runtime-state';
import { serve } from '@hono/node-server';
import { Hono, type MiddlewareHandler } from 'hono';
import { streamSSE } from 'hono/streaming';
import { usageError } from '../core/cli-error.js';
import { findCheckpointForkedFrom } from '../core/fork-point.js';
import { displayPath } from '../core/location.js';
import type { OpenedLocation } from '../core/open-location.js';
import { compareCheckpoints } from './checkpoint-comparison.js';
import { checkpointDetail, eventRecord } from './checkpoint-detail.js';
import { listenError, machineNames } from './explorer-binding.js';
import { type CheckpointReader, ExplorerCheckpoints } from './explorer-checkpoints.js';
import { pageFiles, refusalPage } from './explorer-page-files.js';
import { parsePlanRequest, planOfRequest } from './explorer-plan.js';
import { ExplorerRuns, parseRunRequest } from './explorer-runs.js';
import { GraphCache } from './graph-cache.js';
import { statusOf } from './http-status.js';
import { LiveUpdates } from './live-updates.js';
import { jsonBody, limitBody } from './request-body.js';
import {
  allowedHosts,
  hostWithPort,
  isLoopbackHost,
  isWildcardHost,
  newToken,
  refuseRequest,
} from './request-guard.js';

export interface ExplorerOptions {
  opened: OpenedLocation;
  providers: ProviderRegistry;
  /** Project directory: resume and fork load its crewline.config.ts. */
  cwd: string;
  /** Port to listen on. Default 0: a free one. */
  port?: number;
  /**
   * The address to listen on. Default `'127.0.0.1'`: only this machine reaches the page. Another
   * address (`0.0.0.0` for every interface) lets other machines in; `Host` and `Origin` must then name
   * that address (or, for `0.0.0.0` and `::`, one of this machine's addresses or its name).
   */
  host?: string;
  /** Allow resume, fork and edits from the page. Default false: read-only. */
  allowResume?: boolean;
  /** The URL token. Default: 24 random bytes. */
  token?: string;
  /**
   * How many runs started from the page may run at once; one more is refused (409) until one ends.
   * Default 3.
   */
  maxConcurrentRuns?: number;
  /** How many ended runs the Runs panel keeps (the oldest are forgotten first). Default 50. */
  maxFinishedRuns?: number;
  /** How often the location is checked for new checkpoints while a page listens. Default 1000 ms. */
  pollIntervalMs?: number;
  /**
   * How often the whole listing is compared while a page listens, to see checkpoints deleted or
   * pruned (by `crewline checkpoint prune`, `maxCheckpoints` or another process). Default 5000 ms.
   */
  listIntervalMs?: number;
  /**
   * Prices the detail turns tokens into a cost with (the project's `modelPrices`). Default: none, so
   * every model but the offline one has an unknown cost.
   */
  modelPrices?: ModelPrices;
  /**
   * How the explorer's messages and page name the CLI, so a command they print runs where the user
   * typed theirs: `crewline checkpoint serve` passes commandName's answer (`pnpm crewline`
   * under pnpm). Default `crewline`.
   */
  command?: string;
}

export interface RunningExplorer {
  /**
   * The URL to open, the token in its fragment (`#token=`), which the browser keeps to itself: it
   * reaches no server, log or `Referer`.
   */
  url: string;
  port: number;
  /** The address listened on. */
  hostname: string;
  /** False when machines other than this one can reach the server (a non-loopback `host`). */
  loopbackOnly: boolean;
  token: string;
  readOnly: boolean;
  /**
   * The runs started from the page that are still running, one line each saying that stopping the
   * server interrupts it and the command that continues it (empty when none runs). Said by
   * `crewline checkpoint serve` on Ctrl+C, before {@link RunningExplorer.close}.
   */
  interruptedRuns(): string[];
  close(): Promise<void>;
}

/** What the routes that read checkpoints get from {@link startExplorer}'s `readCheckpoints`. */
interface ExplorerEnvironment {
  Variables: { checkpoints: CheckpointReader };
}

/**
 * Starts the lineage explorer over an opened location: a page and a small JSON API on 127.0.0.1 (or `host`),
 * every request checked by {@link refuseRequest} (token, Host, Origin). It reads through the same
 * provider and views as `crewline checkpoint list`, `info` and `diff`; with `allowResume`, resume
 * and fork go through the path of `crewline checkpoint resume|fork`.
 */
export async function startExplorer(options: ExplorerOptions): Promise<RunningExplorer> {
  const { opened, providers } = options;
  const token = options.token ?? newToken();
  const hostname = options.host ?? '127.0.0.1';
  let hosts = allowedHosts(0, hostname);
  const readOnly = options.allowResume !== true;
  const command = options.command ?? 'crewline';
  const files = await pageFiles();
  let port = 0;
  const checkpoints = new ExplorerCheckpoints(opened);
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const live = new LiveUpdates({
    latest: async () => (await opened.provider.latest(opened.location))?.id,
    // Its own listing: the cached one (and what is computed from it) stays until something changed.
    ids: async () => (await opened.provider.list(opened.location)).map((checkpoint) => checkpoint.id),
    onChange: () => checkpoints.forget(),
    intervalMs: pollIntervalMs,
    listEvery: Math.max(1, Math.round((options.listIntervalMs ?? 5000) / pollIntervalMs)),
  });
  const runs = new ExplorerRuns({
    cwd: options.cwd,
    providers,
    provider: opened.provider,
    location: opened.location,
    reference: async (id) => (await checkpoints.find(id)).reference,
    ...(options.maxConcurrentRuns !== undefined ? { maxConcurrentRuns: options.maxConcurrentRuns } : {}),
    ...(options.maxFinishedRuns !== undefined ? { maxFinishedRuns: options.maxFinishedRuns } : {}),
    onUpdate: (event, data) => {
      live.broadcast(event, data);
      if (event === 'run') void live.poll(true);
    },
  });
  await live.poll(true);
  // The kept listing is current only while a page listens: LiveUpdates then watches the location and
  // drops it on a change. With no page, nothing watches, so a request that reads the checkpoints (a
  // script asking /api/graph) reads what was stored when it came, not what an earlier request saw.
  const readCheckpoints: MiddlewareHandler<ExplorerEnvironment> = async (context, next) => {
    context.set('checkpoints', checkpoints.reader(live.listeners === 0));
    await next();
  };

  const graphs = new GraphCache();
  const app = new Hono<ExplorerEnvironment>();
  app.use(async (context, next) => {
    const refusal = refuseRequest(
      {
        method: context.req.method,
        url: new URL(context.req.url),
        header: (name) => context.req.header(name),
      },
      port,
      token,
      hosts,
      command,
    );
    if (refusal) {
      // A browser opening an API address by hand reads the reason as a page, not as JSON.
      if (context.req.method === 'GET' && (context.req.header('accept') ?? '').includes('text/html'))
        return context.html(refusalPage(refusal.message), refusal.status);
      return context.json({ error: refusal.message }, refusal.status);
    }
    await next();
    context.header('Cache-Control', 'no-store');
    context.header('X-Content-Type-Options', 'nosniff');
    context.header('Referrer-Policy', 'no-referrer');
    context.header('X-Frame-Options', 'DENY');
    context.header(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
  });
  app.onError(async (error, context) => {
    const { redactSecretsInText } = await import('@crewline/events');
    const message = redactSecretsInText(error instanceof Error ? error.message : String(error));
    return context.json({ error: message }, statusOf(error));
  });

  // Every answer of the API is JSON with an `error` when it refuses, an address it does not serve too
  // (Hono's default is a plain-text "404 Not Found" a client cannot read the same way).
  app.notFound((context) =>
    context.json(
      {
        error: `no ${context.req.method} ${new URL(context.req.url).pathname} here; the API's routes are listed in the explorer section of the @crewline/cli README`,
      },
      404,
    ),
  );
  app.get('/', (context) => {
    // Served without the token (it holds no data): the page reads the token from its own URL.
    const page = files.get('index.html')!;
    return context.body(new Uint8Array(page.body), 200, { 'Content-Type': page.type });
  });
  app.get('/assets/:name', (context) => {
    const file = files.get(context.req.param('name'));
    if (!file || context.req.param('name') === 'index.html')
      return context.json({ error: 'no such file' }, 404);
    return context.body(new Uint8Array(file.body), 200, { 'Content-Type': file.type });
  });
  app.get('/api/session', (context) =>
    context.json({
      readOnly,
      location: displayPath(opened.location, options.cwd),
      provider: opened.kind,
      command,
    }),
  );
  app.get('/api/graph', readCheckpoints, async (context) => {
    const expand = new Set((context.req.query('expand') ?? '').split(',').filter((key) => key !== ''));
    return context.body(graphs.body(await context.var.checkpoints.list(), { expand }), 200, {
      'Content-Type': 'application/json; charset=utf-8',
    });
  });
  app.get('/api/checkpoints/:id', readCheckpoints, async (context) => {
    const { checkpoint, view: shown } = await context.var.checkpoints.view(context.req.param('id'));
    const forkPoint = await findCheckpointForkedFrom(
      opened.provider,
      opened.location,
      shown.document.metadata,
    );
    return context.json(checkpointDetail(checkpoint, shown, options.modelPrices, forkPoint));
  });
  app.get('/api/checkpoints/:id/events/:sequence', readCheckpoints, async (context) => {
    const sequence = Number(context.req.param('sequence'));
    if (!Number.isSafeInteger(sequence)) throw usageError('an event is named by its sequence number');
    const { view: shown } = await context.var.checkpoints.view(context.req.param('id'));
    return context.json(eventRecord(shown, sequence));
  });
  // Changes nothing (a plan of what a continuation would run), so a read-only server answers it too.
  app.post('/api/checkpoints/:id/plan', limitBody, readCheckpoints, async (context) => {
    const request = parsePlanRequest(await jsonBody(context.req));
    const { view: shown } = await context.var.checkpoints.view(context.req.param('id'));
    return context.json(await planOfRequest(request, shown, opened));
  });
  app.get('/api/diff', readCheckpoints, async (context) => {
    const a = context.req.query('a');
    const b = context.req.query('b');
    if (!a || !b) throw usageError('diff needs two checkpoints: /api/diff?a=ID&b=ID');
    const [first, second] = await Promise.all([
      context.var.checkpoints.view(a),
      context.var.checkpoints.view(b),
    ]);
    return context.json(compareCheckpoints(first.view, second.view));
  });
  app.get('/api/runs', (context) => context.json(runs.list()));
  app.post('/api/runs', limitBody, readCheckpoints, async (context) => {
    if (readOnly) {
      return context.json(
        { error: `this explorer is read-only; start it with \`${command} checkpoint serve --allow-resume\`` },
        403,
      );
    }
    const request = parseRunRequest(await jsonBody(context.req));
    return context.json(
      await runs.start({
        ...request,
        checkpoint: (await context.var.checkpoints.find(request.checkpoint)).id,
      }),
      202,
    );
  });
  app.get('/api/events', (context) =>
    streamSSE(context, async (stream) => {
      // The first page: nothing watched the location before it, so the listing kept since is dropped.
      if (live.listeners === 0) checkpoints.forget();
      const remove = live.add({
        send: (event, data) => stream.writeSSE({ event, data: JSON.stringify(data) }),
      });
      await stream.writeSSE({ event: 'hello', data: JSON.stringify({ readOnly }) });
      const ping = setInterval(() => void stream.write(': ping\n\n').catch(() => undefined), 15_000);
      await new Promise<void>((resolve) => stream.onAbort(resolve));
      clearInterval(ping);
      remove();
    }),
  );

  let server: ReturnType<typeof serve>;
  try {
    server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const created = serve({ fetch: app.fetch, port: options.port ?? 0, hostname }, () => resolve(created));
      created.once('error', reject);
    });
  } catch (error) {
    // Nothing listens: the polling started above would run for nothing.
    live.close();
    throw await listenError(error, hostname, options.port ?? 0);
  }
  port = (server.address() as AddressInfo).port;
  hosts = allowedHosts(port, hostname, isWildcardHost(hostname) ? machineNames() : []);
  // Bound to every interface, the URL names this machine rather than 0.0.0.0, which a browser on
  // another machine cannot open.
  const shownHost = isWildcardHost(hostname)
    ? (machineNames().find((name) => !isLoopbackHost(name)) ?? '127.0.0.1')
    : hostname;
  return {
    url: `http://${hostWithPort(shownHost, port)}/#token=${token}`,
    port,
    hostname,
    loopbackOnly: isLoopbackHost(hostname),
    token,
    readOnly,
    interruptedRuns: () => runs.interruptions(options.cwd, command),
    close: async () => {
      live.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}
