import {
  browseCommand,
  checkpointCommandNames,
  checkpointHelp,
  commands,
  findCommand,
  mainHelp,
  namesBrowserLocation,
} from './commands/registry.js';
import type { CliContext, TextSink } from './core/cli-context.js';
import { exitCodes, withErrorBoundary } from './core/error-boundary.js';
import { cliVersion } from './core/version.js';

/** The process's streams and environment, for {@link runCli} without a context. */
export function processContext(): CliContext {
  return {
    cwd: process.cwd(),
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
  };
}

const helpFlags = new Set(['--help', '-h', 'help']);

/**
 * Runs `crewline` with `argv` (without the node and script paths) and resolves to the exit code.
 * Never throws: every failure goes through the one error boundary.
 */
export async function runCli(
  argv: readonly string[],
  context: CliContext = processContext(),
): Promise<number> {
  // What the boundary reports (a message, or a stack for a bug report) may quote a credential: it goes
  // through redaction, loaded only once something failed so that `crewline --help` stays fast.
  let redact: ((text: string) => string) | undefined;
  const stderr: TextSink = { write: (text: string) => context.stderr.write(redact ? redact(text) : text) };
  const body = async () => {
    try {
      return await dispatch(argv, context);
    } catch (error) {
      redact = (await import('@crewline/events')).redactSecretsInText;
      throw error;
    }
  };
  try {
    return await withErrorBoundary(body, stderr, context.env);
  } finally {
    // `--help` and `--version` open no location: they do not load the registry (and the library).
    if (!printsOnly(argv)) {
      const { closeProviders } = await import('./core/providers.js');
      await closeProviders(context).catch(() => undefined);
    }
  }
}

function printsOnly(argv: readonly string[]): boolean {
  const [first] = argv;
  return first === undefined || helpFlags.has(first) || first === '--version' || first === '-v';
}

/**
 * True when `crewline <argv>` only reads and prints (help, `list`, `info`, a usage error): `bin`
 * ends it quietly once its stdout is closed. False for a command that runs a crew or flow, changes
 * storage or serves (resume, fork, `flows rerun`, prune, the worker, the browser): it goes on
 * without its output.
 */
export function endsWhenOutputCloses(argv: readonly string[]): boolean {
  const [first, ...rest] = argv;
  if (printsOnly(argv)) return true;
  const underCheckpoint = first === 'checkpoint' || first === 'checkpoints';
  const [name, ...commandArgs] = underCheckpoint ? rest : argv;
  const asksHelp = (args: readonly string[]) => args.some((arg) => arg === '--help' || arg === '-h');
  // `crewline checkpoint` alone (or with options) is the browser, unless it is asked for its help;
  // an option in place of a command is refused as an unknown command.
  if (name === undefined || name.startsWith('-'))
    return !underCheckpoint || (name !== undefined && asksHelp([name, ...commandArgs]));
  if (underCheckpoint && namesBrowserLocation(name, process.cwd())) return asksHelp(commandArgs);
  const command = findCommand(name);
  // An unknown command only prints its refusal; `--help` only prints the usage.
  if (!command || asksHelp(commandArgs)) return true;
  const { onlyPrints = false } = command;
  return typeof onlyPrints === 'function' ? onlyPrints(commandArgs) : onlyPrints;
}

async function dispatch(argv: readonly string[], context: CliContext): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || helpFlags.has(first)) {
    context.stdout.write(mainHelp(cliVersion()));
    return exitCodes.ok;
  }
  if (first === '--version' || first === '-v') {
    context.stdout.write(`${cliVersion()}\n`);
    return exitCodes.ok;
  }
  let args: readonly string[];
  if (first === 'checkpoint' || first === 'checkpoints') args = rest;
  else if (findCommand(first)) args = argv;
  else {
    const { usageError } = await import('./core/cli-error.js');
    const { commandName } = await import('./core/command-name.js');
    const names = ['checkpoint', ...commands.map((command) => command.name)];
    throw usageError(
      `unknown command "${first}"${await didYouMean(first, names)}; the commands are ${names.join(', ')} (see ${commandName(context.env, context.cwd)} --help)`,
    );
  }
  const [name, ...commandArgs] = args;
  const command = name === undefined || name.startsWith('-') ? undefined : findCommand(name);
  // `crewline checkpoint pipe.db`: the browser on that location, as `list pipe.db` lists it.
  const browsesLocation = name !== undefined && namesBrowserLocation(name, context.cwd);
  if (name !== undefined && !name.startsWith('-') && !command && !browsesLocation) {
    const { usageError } = await import('./core/cli-error.js');
    const { commandName } = await import('./core/command-name.js');
    const names = commands.flatMap((command) => [command.name, ...(command.aliases ?? [])]);
    throw usageError(
      `unknown checkpoint command "${name}"${await didYouMean(name, names)}; the checkpoint commands are ${checkpointCommandNames.join(', ')} (\`${commandName(context.env, context.cwd)} checkpoint --help\` says what each does)`,
    );
  }
  const definition = command ?? browseCommand;
  const options = command ? commandArgs : args;
  if (options.some((arg) => arg === '--help' || arg === '-h')) {
    context.stdout.write(command ? `${definition.usage}\n` : checkpointHelp());
    return exitCodes.ok;
  }
  const module = await definition.load();
  try {
    return await module.run(options, context);
  } catch (error) {
    // The registry's refusal of a URL (`postgress://…`) ends with advice only code can follow.
    const { unclaimedUrlError } = await import('./commands/unclaimed-url.js');
    throw (await unclaimedUrlError(error, options, context)) ?? error;
  }
}

/**
 * ` (did you mean list?)` for a mistyped command name, or nothing when no command is close: the
 * same guess an unknown option gets. Loaded only on this error path so that startup stays fast.
 */
async function didYouMean(word: string, names: readonly string[]): Promise<string> {
  const { nearestName } = await import('@crewline/runtime-state/internal');
  const nearest = nearestName(word, names);
  return nearest === undefined ? '' : ` (did you mean ${nearest}?)`;
}
