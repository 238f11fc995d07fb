import { shellWord } from '@crewline/runtime-state/internal';
import { onExit } from 'signal-exit';
import type { TextSink } from './cli-context.js';
import type { WrittenCheckpoint } from './continue-run.js';
import { printable } from './format.js';
import { displayPath } from './location.js';
import { type StartOverFlags, startOverCommand } from './start-over-command.js';

/** The short id `list` prints for a checkpoint: the random part after its time. */
function shortId(id: string): string {
  return id.slice(id.lastIndexOf('-') + 1);
}

export interface InterruptReport {
  /** Notes a checkpoint the run wrote (after Ctrl+C too: the hint on the way out names the last one). */
  noteCheckpoint(checkpoint: WrittenCheckpoint): void;
  /** Stops listening for Ctrl+C (the run ended). */
  stop(): void;
}

/**
 * While `resume`, `fork` or `flows rerun` runs (from the command line or the browser): on Ctrl+C (SIGINT) says on stderr where the run stopped and the
 * command that continues it, then lets the signal end the process as before (exit status 130).
 * Without it the command ended silently, and the user had to find the last checkpoint in a listing.
 *
 * The runtime's listener comes first (it is prepended when the run starts) and saves what the run
 * checkpoints on SIGINT. With checkpoint writes in flight it keeps listening and raises the signal
 * again once they are written; signal-exit's listener then ends the process, and the one hint is
 * said on that way out, naming the last checkpoint written (the one on SIGINT included).
 */
export function reportInterrupt(options: {
  /** The command's word for the run (`resume`, `fork`, `rerun`): "interrupted before this rerun wrote...". */
  mode: 'resume' | 'fork' | 'rerun';
  /** The checkpoint the command continues. */
  from: string;
  cwd: string;
  /** How the hint names the CLI (see commandName: `pnpm crewline` when pnpm ran it). Default `crewline`. */
  command?: string;
  /**
   * For a run started in a browser: where `from` is, and what the run was started with (a fork's
   * branch, edited outputs and inputs, an answer, which live in the browser's memory only). An
   * interrupt before the run wrote a checkpoint then names the command that starts over, with them.
   * Default: "run the same command again" (a command line holds its own flags).
   */
  startOver?: { location: string; flags?: StartOverFlags };
  stderr: TextSink;
  /**
   * Called, synchronously, when a signal is about to end the process (Ctrl+C once the runtime wrote
   * what it checkpoints on it, SIGTERM, SIGHUP): what must be closed before the process goes.
   */
  onWayOut?: () => void;
}): InterruptReport {
  let last: WrittenCheckpoint | undefined;
  let interrupted = false;
  let said = false;
  const command = options.command ?? 'crewline';
  const continueWith = (checkpoint: WrittenCheckpoint) =>
    `${command} checkpoint resume ${shortId(checkpoint.id)} --location ${shellWord(displayPath(checkpoint.location, options.cwd))}`;
  const sayWhereItStopped = () => {
    if (!interrupted || said) return;
    said = true;
    options.stderr.write(
      printable(
        `crewline: ${
          last === undefined
            ? `interrupted before this ${options.mode} wrote a checkpoint; ${
                options.startOver === undefined
                  ? `run the same command again to start over from ${shortId(options.from)}`
                  : `start over with: ${startOverCommand({
                      command,
                      mode: options.mode,
                      from: shortId(options.from),
                      location: displayPath(options.startOver.location, options.cwd),
                      ...(options.startOver.flags ? { flags: options.startOver.flags } : {}),
                    })}`
              }`
            : `interrupted; the run stopped after checkpoint ${shortId(last.id)} on branch ${last.branch}; continue it with: ${continueWith(last)}`
        }\n`,
      ),
    );
  };
  const onInterrupt = () => {
    process.off('SIGINT', onInterrupt);
    interrupted = true;
    // Said on the way out, not now: the runtime may still be writing what it checkpoints on the
    // signal, and that checkpoint is the one to continue from. Said now, the hint named the one
    // before it (following it forked), and a second hint followed (trial 1127 A).
    if (process.listenerCount('SIGINT') === 0) {
      sayWhereItStopped();
      process.kill(process.pid, 'SIGINT');
    }
  };
  process.on('SIGINT', onInterrupt);
  // After the listener above, so that signal-exit's listener comes after it too: it acts when it
  // finds itself the signal's only listener, which the runtime's rule counts as nobody (signals.ts),
  // so the process ends by the signal, once the runtime's writes are done, after this callback.
  const stopOnWayOut = onExit((_code, signal) => {
    if (signal === null) return;
    sayWhereItStopped();
    options.onWayOut?.();
  });
  return {
    noteCheckpoint(checkpoint) {
      last = checkpoint;
    },
    stop() {
      process.off('SIGINT', onInterrupt);
      stopOnWayOut();
      // Interrupted, but the run ended without the signal ending the process: still say it.
      sayWhereItStopped();
    },
  };
}
