import { parseCommandArguments, parseCount } from '../core/args.js';
import type { CliContext } from '../core/cli-context.js';
import { usageError } from '../core/cli-error.js';
import { commandName } from '../core/command-name.js';
import { displayPath } from '../core/location.js';
import { modelPricesOf } from '../core/model-prices.js';
import { openLocation } from '../core/open-location.js';
import { providersOf } from '../core/providers.js';

/** Resolves on the first SIGINT or SIGTERM. */
function untilStopped(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** `crewline checkpoint serve [LOCATION] [--port N] [--host H] [--allow-resume]`: the lineage explorer. */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    'checkpoint serve',
    args,
    {
      location: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'allow-resume': { type: 'boolean' },
    },
    1,
    commandName(context.env, context.cwd),
  );
  const port = values.port === undefined ? 0 : parseCount('--port', values.port);
  if (port > 65_535) throw usageError(`--port must be 0 to 65535, got ${port}`);
  if (values.host !== undefined && values.host.trim() === '')
    throw usageError('--host needs an address, e.g. --host 127.0.0.1 (the default) or --host 0.0.0.0');
  const providers = await providersOf(context);
  const opened = await openLocation(positionals[0] ?? values.location, context.cwd, providers);
  const { startExplorer } = await import('../serve/explorer-server.js');
  const explorer = await startExplorer({
    opened,
    providers,
    cwd: context.cwd,
    port,
    ...(values.host !== undefined ? { host: values.host.trim() } : {}),
    allowResume: values['allow-resume'] === true,
    modelPrices: await modelPricesOf(context),
    command: commandName(context.env, context.cwd),
  });
  const out = (line: string) => context.stdout.write(`${line}\n`);
  out(`Lineage explorer of ${displayPath(opened.location, context.cwd)} (${opened.kind})`);
  out(
    explorer.readOnly
      ? '  read-only: start with --allow-resume to edit, resume and fork from the page'
      : '  resume, fork and edits allowed from the page',
  );
  if (!explorer.loopbackOnly) {
    // Plain HTTP: the token travels in clear text to every machine that can reach this address.
    context.stderr.write(
      `crewline warn [serve] --host ${explorer.hostname} lets other machines reach the explorer over plain HTTP; anyone who sees its URL can read${explorer.readOnly ? '' : ', resume and fork'} these checkpoints. Leave --host out to listen on 127.0.0.1 only\n`,
    );
  }
  out(`  open ${explorer.url}`);
  out(
    '  the page keeps the token after # for its requests (a new one at each start); Ctrl+C stops the server',
  );
  await untilStopped();
  // A run started from the page stops with the process: say which, and how to continue it.
  for (const line of explorer.interruptedRuns()) context.stderr.write(`${line}\n`);
  await explorer.close();
  return 0;
}
