/** @jsxRuntime automatic */
/** @jsxImportSource react */
// The pragmas keep the automatic JSX runtime when tsx runs this file outside our tsconfig (a user project).
import { type LogRecord, setLogSink } from '@crewline/events';
import { type CheckpointProvider, readDocument } from '@crewline/runtime-state';
import { onExit } from 'signal-exit';
import { parseCommandArguments } from '../core/args.js';
import { checkRunExists } from '../core/branch-check.js';
import { branchTaken, renameInBrowser } from '../core/branch-taken.js';
import { type CliContext, colorEnabled } from '../core/cli-context.js';
import { cliError, usageError } from '../core/cli-error.js';
import { commandName } from '../core/command-name.js';
import { type ContinueOutcome, continueRun } from '../core/continue-run.js';
import { continuedSinceReadInWords, continuedSinceReadWordsOfBrowser } from '../core/continued-since-read.js';
import { viewDocument } from '../core/document-view.js';
import { exitCodes } from '../core/error-boundary.js';
import { type InterruptReport, reportInterrupt } from '../core/interrupt-report.js';
import { leaseHeld, leaseWordsOfBrowser } from '../core/lease-held.js';
import { displayPath } from '../core/location.js';
import { nothingToRunInWords, runAgainWordsOfBrowser } from '../core/nothing-to-run.js';
import { type OpenedLocation, openLocation } from '../core/open-location.js';
import { loadProject } from '../core/project-config.js';
import { providersOf } from '../core/providers.js';
import type { BrowserHost } from '../tui/browser-host.js';
import type { Styling } from '../tui/components/screen-view.js';
import { importInteractiveInk } from '../tui/load-ink.js';
import { findResumePlan } from '../tui/resume-plan.js';
import { initialState, type RunPause } from '../tui/state/browser-state.js';
import { startOverFlags } from '../tui/state/start-over-flags.js';

// With the alternate screen, bracketed paste: the terminal marks a pasted text (ESC [200~ … ESC [201~),
// so the browser takes it as text even when it arrives in several reads, never as keys (which could
// quit or start a run). Turned off with the screen, on every way out (a signal's included).
const enterAlternateScreen = '\u001B[?1049h\u001B[H\u001B[?2004h';
const leaveAlternateScreen = '\u001B[?2004l\u001B[?1049l';

function logLine(record: LogRecord): string {
  const cause = record.error instanceof Error ? `: ${record.error.message}` : '';
  return `${record.level} [${record.component}] ${record.message}${cause}`;
}

/** A paused run's question, with the checkpoint (id and reference) the answer continues from. */
function runPause(
  pause: NonNullable<ContinueOutcome['pause']>,
  provider: Pick<CheckpointProvider, 'parseReference'>,
): RunPause {
  const reference = pause.resumeFrom;
  const id = reference === undefined ? undefined : provider.parseReference(reference)?.id;
  return {
    methodName: pause.methodName,
    message: pause.message,
    ...(reference !== undefined && id !== undefined ? { checkpoint: { id, reference } } : {}),
  };
}

/**
 * The lineage `--lineage` names: itself when the location holds checkpoints of it, else the one run
 * whose id starts with it (as `list --run` takes a prefix). One that names no run is refused as by
 * `list --run` (exit code 2), before the browser opens on an empty list.
 */
async function lineageToBrowse(
  opened: OpenedLocation,
  lineage: string,
  where: string,
  command: string,
): Promise<string> {
  if ((await opened.provider.list(opened.location, { lineageId: lineage })).length > 0) return lineage;
  const all = await opened.provider.list(opened.location);
  checkRunExists(all, lineage, where, command);
  const runs = [...new Set(all.map((checkpoint) => checkpoint.lineageId))].filter((id) =>
    id.startsWith(lineage),
  );
  if (runs.length > 1) {
    throw usageError(
      `--lineage ${JSON.stringify(lineage)} starts ${runs.length} runs' ids in ${where} (${runs.slice(0, 5).join(', ')}${runs.length > 5 ? ', ...' : ''}); give more of the id`,
    );
  }
  return runs[0]!;
}

/** `crewline checkpoint [LOCATION | --location P] [--lineage L]`: the checkpoint browser. */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    'checkpoint',
    args,
    { location: { type: 'string' }, lineage: { type: 'string' } },
    1,
    commandName(context.env, context.cwd),
  );
  const location = positionals[0] ?? values.location;
  const stdin = context.stdin ?? process.stdin;
  if (!stdin.isTTY || !context.stdout.isTTY) {
    const command = commandName(context.env, context.cwd);
    throw cliError(
      'invalid_argument',
      `the checkpoint browser needs an interactive terminal; in scripts use \`${command} checkpoint list\` and \`${command} checkpoint info\``,
    );
  }
  const providers = await providersOf(context);
  const opened = await openLocation(location, context.cwd, providers);
  // One run's checkpoints (`crewline runs open` names the run's lineage), or all of the location's.
  const query =
    values.lineage === undefined
      ? undefined
      : {
          lineageId: await lineageToBrowse(
            opened,
            values.lineage,
            displayPath(opened.location, context.cwd),
            commandName(context.env, context.cwd),
          ),
        };
  // Registered before the browser opens, so a broken config is reported now, not mid-run.
  await loadProject(context.cwd);
  // Ink first, so that the components below get the interactive instance (see load-ink.ts).
  const { render } = await importInteractiveInk();
  const { BrowserApp } = await import('../tui/components/browser-app.js');

  // Log lines would tear Ink's drawing: during a run they become progress lines, otherwise they
  // are kept and printed after the browser closes.
  let runLine: ((line: string) => void) | undefined;
  const heldLogs: string[] = [];
  setLogSink((record) => {
    if (runLine) runLine(logLine(record));
    else heldLogs.push(logLine(record));
  });
  let interrupted = false;
  let interruptReport: InterruptReport | undefined;
  let instance: ReturnType<typeof render> | undefined;
  let onAlternateScreen = false;
  const restoreScreen = () => {
    if (onAlternateScreen) context.stdout.write(leaveAlternateScreen);
    onAlternateScreen = false;
  };
  const host: BrowserHost = {
    list: () => opened.provider.list(opened.location, query),
    readView: async (checkpointId) =>
      viewDocument(await readDocument(opened.provider, opened.location, checkpointId)),
    planResume: (checkpointId) => findResumePlan(opened.provider, opened.location, checkpointId),
    run: async (request, onLine) => {
      runLine = onLine;
      // Ctrl+C (interrupt below) says on stderr, once the terminal is given back, where the run
      // stopped and the command that continues it, as resume and fork on the command line do.
      // Its tasks: progress lines number them as the browser's detail pane does.
      const view = viewDocument(await readDocument(opened.provider, opened.location, request.checkpointId));
      const { tasks } = view;
      interruptReport = reportInterrupt({
        mode: request.mode,
        from: request.checkpointId,
        cwd: context.cwd,
        command: commandName(context.env, context.cwd),
        // The edits are in the browser's memory only: the hint repeats them (trial s8 finding 1).
        startOver: { location: opened.location, flags: startOverFlags(request, view) },
        stderr: context.stderr,
        onWayOut: () => providers.closeNow(),
      });
      const report = interruptReport;
      try {
        const outcome = await continueRun({
          tasks,
          reference: request.reference,
          mode: request.mode,
          cwd: context.cwd,
          providers,
          onLine,
          width: Math.max(40, (context.stdout.columns ?? 80) - 2),
          ...(request.branch !== undefined ? { branch: request.branch } : {}),
          ...(request.inputs !== undefined ? { inputs: request.inputs } : {}),
          ...(request.taskOutputs !== undefined ? { taskOutputs: request.taskOutputs } : {}),
          ...(request.humanInput !== undefined ? { humanInput: request.humanInput } : {}),
          onCheckpoint: (checkpoint) => report.noteCheckpoint(checkpoint),
        });
        return {
          branch: outcome.branch,
          output: outcome.output,
          ...(outcome.lastCheckpoint ? { lastCheckpoint: outcome.lastCheckpoint } : {}),
          ...(outcome.pause ? { pause: runPause(outcome.pause, opened.provider) } : {}),
        };
      } catch (error) {
        // The runtime names its `branch` and `onConflict` options; here they are the fork's key and prompt.
        throw (
          leaseHeld(error, leaseWordsOfBrowser) ??
          continuedSinceReadInWords(error, continuedSinceReadWordsOfBrowser) ??
          nothingToRunInWords(error, runAgainWordsOfBrowser) ??
          branchTaken(error, request.branch, renameInBrowser) ??
          error
        );
      } finally {
        runLine = undefined;
        report.stop();
        interruptReport = undefined;
      }
    },
    interrupt: () => {
      // Like Ctrl+C outside the browser (the terminal is in raw mode, so the key arrives as input):
      // the terminal is given back, then the process gets SIGINT. The runtime writes a checkpoint
      // when the run subscribes to it, waits for writes in flight, and lets the process end by the
      // signal, next to the terminal library's own exit listener (shells report 130).
      interrupted = true;
      instance?.unmount();
      restoreScreen();
      // The run's interrupt report says it on the signal, with where the run stopped.
      if (interruptReport === undefined)
        context.stderr.write('crewline: interrupted; ending once checkpoint writes in flight are done\n');
      process.kill(process.pid, 'SIGINT');
    },
  };
  const styling: Styling = colorEnabled(context) ? 'full' : 'monochrome';
  // Like less or vim, draw on the terminal's alternate screen and give the user's screen (and
  // scrollback) back untouched on exit.
  context.stdout.write(enterAlternateScreen);
  onAlternateScreen = true;
  // On process.exit() and on a signal that ends the process (SIGTERM, SIGHUP: they end it with no
  // 'exit' event, and the shell got the alternate screen and bracketed paste still on). signal-exit's
  // listener acts only when no other listener of the signal is left, which the runtime's rule counts
  // as nobody (packages/runtime/src/checkpointing/signals.ts): during a run the runtime writes its
  // checkpoint on the signal and raises it again, and only then does this run, just before the process
  // ends by the signal. A listener of our own would count as the program's handler: the runtime would
  // leave the process's fate to it and close no provider, and the signal raised again from it reached
  // the run a second time (two SIGTERM checkpoints) or cut the runtime's wait for its writes short.
  const stopRestoringOnExit = onExit(() => {
    // Ink's last frame goes to the alternate screen, not to the user's (as on `q`).
    instance?.unmount();
    restoreScreen();
  });
  instance = render(
    <BrowserApp
      initial={initialState({
        location: opened.location,
        title: `${displayPath(opened.location, context.cwd)}${query ? ` (lineage ${query.lineageId})` : ''}`,
        providerKind: opened.kind,
      })}
      host={host}
      styling={styling}
    />,
    {
      stdin,
      stdout: context.stdout as NodeJS.WriteStream,
      stderr: context.stderr as NodeJS.WriteStream,
      exitOnCtrlC: false,
      patchConsole: true,
    },
  );
  try {
    await instance!.waitUntilExit();
  } finally {
    stopRestoringOnExit();
    restoreScreen();
    // Logs after the browser closes go to stderr again, in the logger's usual form.
    setLogSink((record) => context.stderr.write(`crewline ${logLine(record)}\n`));
  }
  for (const line of heldLogs) context.stderr.write(`crewline ${line}\n`);
  return interrupted ? exitCodes.interrupted : exitCodes.ok;
}
