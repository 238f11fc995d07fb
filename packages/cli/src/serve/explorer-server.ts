import { readdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { hostname as machineName, networkInterfaces } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ModelPrices,
  type ProviderRegistry,
  readDocument,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import { parseAssignments } from '../core/args.js';
import { checkBeforeRunning } from '../core/check-before-running.js';
import { cliError, usageError } from '../core/cli-error.js';
import { planContinuation } from '../core/continuation-plan.js';
import { viewDocument } from '../core/document-view.js';
import { findCheckpointForkedFrom } from '../core/fork-point.js';
import { displayPath } from '../core/location.js';
import { newerHeadOf } from '../core/newer-head.js';
import { runAgainWordsOfPage } from '../core/nothing-to-run.js';
import type { OpenedLocation } from '../core/open-location.js';
import { parseTaskOutputs } from '../core/task-outputs.js';
import { compareCheckpoints } from './checkpoint-comparison.js';
import { checkpointDetail, eventRecord } from './checkpoint-detail.js';
import { findCheckpoint } from './checkpoint-lookup.js';
import { ExplorerRuns, parseRunRequest } from './explorer-runs.js';
import { GraphCache } from './graph-cache.js';
import { statusOf } from './http-status.js';
import { LiveUpdates } from './live-updates.js';
import {
  allowedHosts,
  hostWithPort,
  isLoopbackHost,
  isWildcardHost,
  newToken,
  refuseRequest,
} from './request-guard.js';

/** Where the page's static files are: `explorer-page/` of this package, from `src/serve` or `dist/serve`. */
export const pageDirectory = fileURLToPath(new URL('../../explorer-page/', import.meta.url));

/** The largest request body the API reads (a run request or a plan with edited outputs). */
const maxBodyBytes = 4 * 1024 * 1024;

/** Refuses a body over {@link maxBodyBytes} with 413 and a message naming the limit. */
const limitBody = bodyLimit({
  maxSize: maxBodyBytes,
  onError: (context) =>
    context.json(
      {
        error: cliError(
          'too_large',
          `checkpoint serve: the request body is over the explorer's limit of 4 MiB (${maxBodyBytes} bytes); send shorter inputs and task outputs`,
        ).message,
      },
      413,
    ),
});

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

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

async function jsonBody(request: { json(): Promise<unknown> }): Promise<unknown> {
  try {
    return await request.json();
  } catch {
    throw usageError('the request body must be JSON');
  }
}

async function pageFiles(): Promise<Map<string, { type: string; body: Buffer }>> {
  const files = new Map<string, { type: string; body: Buffer }>();
  for (const name of await readdir(pageDirectory)) {
    const type = contentTypes[extname(name)];
    if (type) files.set(name, { type, body: await readFile(join(pageDirectory, name)) });
  }
  return files;
}

/** The page a browser gets for a refused request: the reason as text, no script. */
function refusalPage(message: string): string {
  const text = message.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>crewline lineage explorer</title></head><body><h1>crewline lineage explorer</h1><p>${text}</p></body></html>`;
}

/** This machine's name and the addresses of its interfaces (external ones first). */
function machineNames(): string[] {
  const addresses = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .sort(
      (a, b) =>
        Number(a.internal) - Number(b.internal) || Number(a.family !== 'IPv4') - Number(b.family !== 'IPv4'),
    )
    .map((entry) => entry.address);
  return [...addresses, machineName()];
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
  let listing: Promise<StoredCheckpoint[]> | undefined;
  const checkpoints = () => {
    if (!listing) {
      listing = opened.provider.list(opened.location);
      listing.catch(() => {
        listing = undefined;
      });
    }
    return listing;
  };
  // A full id or a unique short form, as the CLI takes them (what `crewline checkpoint list` prints).
  const find = async (id: string): Promise<StoredCheckpoint> => {
    const found = findCheckpoint(await checkpoints(), id, opened.location);
    if (found) return found;
    // Written since the listing was taken: list again once.
    listing = undefined;
    const again = findCheckpoint(await checkpoints(), id, opened.location);
    if (!again) {
      throw cliError('not_found', `no checkpoint ${JSON.stringify(id)} in ${opened.location}`);
    }
    return again;
  };
  const view = async (id: string) => {
    const checkpoint = await find(id);
    return {
      checkpoint,
      view: viewDocument(await readDocument(opened.provider, opened.location, checkpoint.id)),
    };
  };
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const live = new LiveUpdates({
    latest: async () => (await opened.provider.latest(opened.location))?.id,
    // Its own listing: the cached one (and what is computed from it) stays until something changed.
    ids: async () => (await opened.provider.list(opened.location)).map((checkpoint) => checkpoint.id),
    onChange: () => {
      listing = undefined;
    },
    intervalMs: pollIntervalMs,
    listEvery: Math.max(1, Math.round((options.listIntervalMs ?? 5000) / pollIntervalMs)),
  });
  const runs = new ExplorerRuns({
    cwd: options.cwd,
    providers,
    provider: opened.provider,
    location: opened.location,
    reference: async (id) => (await find(id)).reference,
    ...(options.maxConcurrentRuns !== undefined ? { maxConcurrentRuns: options.maxConcurrentRuns } : {}),
    ...(options.maxFinishedRuns !== undefined ? { maxFinishedRuns: options.maxFinishedRuns } : {}),
    onUpdate: (event, data) => {
      live.broadcast(event, data);
      if (event === 'run') void live.poll(true);
    },
  });
  await live.poll(true);

  const graphs = new GraphCache();
  const app = new Hono();
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
  app.get('/api/graph', async (context) => {
    const expand = new Set((context.req.query('expand') ?? '').split(',').filter((key) => key !== ''));
    return context.body(graphs.body(await checkpoints(), { expand }), 200, {
      'Content-Type': 'application/json; charset=utf-8',
    });
  });
  app.get('/api/checkpoints/:id', async (context) => {
    const { checkpoint, view: shown } = await view(context.req.param('id'));
    const forkPoint = await findCheckpointForkedFrom(
      opened.provider,
      opened.location,
      shown.document.metadata,
    );
    return context.json(checkpointDetail(checkpoint, shown, options.modelPrices, forkPoint));
  });
  app.get('/api/checkpoints/:id/events/:sequence', async (context) => {
    const sequence = Number(context.req.param('sequence'));
    if (!Number.isSafeInteger(sequence)) throw usageError('an event is named by its sequence number');
    const { view: shown } = await view(context.req.param('id'));
    return context.json(eventRecord(shown, sequence));
  });
  // Changes nothing (a plan of what a continuation would run), so a read-only server answers it too.
  app.post('/api/checkpoints/:id/plan', limitBody, async (context) => {
    const body = (await jsonBody(context.req)) as {
      outputs?: unknown;
      inputs?: unknown;
      mode?: unknown;
    } | null;
    const outputs = body?.outputs;
    if (
      outputs !== undefined &&
      (!Array.isArray(outputs) || outputs.some((item) => typeof item !== 'string'))
    )
      throw usageError('outputs must be a list of strings like "N=text"');
    // The inputs the run form would send to /api/runs, read the same way: a changed one starts the
    // interrupted task over, and the plan says so before the run is started.
    const inputs = body?.inputs;
    if (inputs !== undefined && (!Array.isArray(inputs) || inputs.some((item) => typeof item !== 'string')))
      throw usageError('inputs must be a list of strings like "key=value" or "key:=<json>"');
    // Without a mode, what a resume would refuse: what both refuse (an edit or input that changes
    // nothing), not the fork's refusal of a finished run left as it is, which a resume gives back.
    const mode = body?.mode ?? 'resume';
    if (mode !== 'resume' && mode !== 'fork') throw usageError('mode must be "resume" or "fork"');
    const { view: shown } = await view(context.req.param('id'));
    const inputChanges = parseAssignments('--input', inputs as string[] | undefined);
    const continuedInputs = inputChanges ? { ...shown.inputs, ...inputChanges } : undefined;
    const taskOutputs = parseTaskOutputs(outputs as string[] | undefined, shown);
    // Refused as /api/runs refuses it (the runtime's own check): a misspelt input, an edit that
    // reaches nothing or a continuation with nothing to run — a plan of it would promise a run that is
    // never started.
    checkBeforeRunning(
      shown.document,
      {
        mode,
        ...(continuedInputs ? { inputs: continuedInputs } : {}),
        ...(taskOutputs ? { taskOutputs } : {}),
      },
      runAgainWordsOfPage,
    );
    // A resume of a checkpoint its run went past moves to a new branch and pays again for what the
    // run did since: said in the plan, before the user confirms, as the runtime warns when it moves.
    const newerHead =
      mode === 'resume'
        ? await newerHeadOf(opened.provider, opened.location, shown.document.metadata)
        : undefined;
    return context.json(
      planContinuation(shown, outputs as string[] | undefined, continuedInputs, {
        ...(newerHead ? { newerHead } : {}),
      }),
    );
  });
  app.get('/api/diff', async (context) => {
    const a = context.req.query('a');
    const b = context.req.query('b');
    if (!a || !b) throw usageError('diff needs two checkpoints: /api/diff?a=ID&b=ID');
    const [first, second] = await Promise.all([view(a), view(b)]);
    return context.json(compareCheckpoints(first.view, second.view));
  });
  app.get('/api/runs', (context) => context.json(runs.list()));
  app.post('/api/runs', limitBody, async (context) => {
    if (readOnly) {
      return context.json(
        { error: `this explorer is read-only; start it with \`${command} checkpoint serve --allow-resume\`` },
        403,
      );
    }
    const request = parseRunRequest(await jsonBody(context.req));
    return context.json(
      await runs.start({ ...request, checkpoint: (await find(request.checkpoint)).id }),
      202,
    );
  });
  app.get('/api/events', (context) =>
    streamSSE(context, async (stream) => {
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

/** A failed bind as a crewline error saying what to change (another port, another host). */
async function listenError(error: unknown, hostname: string, port: number): Promise<unknown> {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EADDRNOTAVAIL' && code !== 'EACCES') return error;
  const where = `port ${port} on ${hostname}`;
  const reason =
    code === 'EADDRINUSE'
      ? `${where} is in use; pick another with --port, or leave --port out for a free one`
      : code === 'EACCES'
        ? `${where} needs privileges this process lacks; pick a port above 1023 with --port`
        : `${hostname} is not an address of this machine; pick one with --host`;
  // A port in use is the machine's state, not a mistake in the call (exit code 1, not 2).
  return cliError(code === 'EADDRINUSE' ? 'conflict' : 'invalid_argument', `checkpoint serve: ${reason}`, {
    cause: error,
  });
}
