import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CommandDefinition } from './command.js';

const referenceHelp = `REF is a checkpoint file, a directory or .db file (its latest checkpoint), path#id, or a
checkpoint id or unique id prefix looked up in --location (default ./.checkpoints or
./.checkpoints.db). Omitted: the latest checkpoint of the default location.`;

const continueOptions = `  --location P           where bare ids are looked up
  --input key=value      change a kickoff input (repeatable; key:=<json> for non-strings);
                         only tasks that have not run yet see the new value
  --set-output N=text    replace the output of completed task N (as numbered by \`info\`);
                         the later tasks of its crew run again (in a flow, also
                         the crews its method started after it) (repeatable)
  --answer "text"        the answer a paused flow waits for (its ask()); it continues with it
  --on-conflict fork     when another process is continuing this run right now (SQLite,
                         Postgres; JSON on this machine), continue on a new branch instead
                         of stopping with the holder's name (default: error)
  --quiet                no progress lines, only the result
  --json                 no progress lines; the outcome as one JSON document`;

/** Every `crewline checkpoint` subcommand, in the order help lists them. */
export const commands: readonly CommandDefinition[] = [
  {
    name: 'list',
    onlyPrints: true,
    aliases: ['ls'],
    summary: 'one line per checkpoint: id, time, size, trigger, branch, run, progress',
    usage: `Usage: crewline checkpoint list [LOCATION] [options]

Lists the checkpoints of a JSON directory, SQLite database or Postgres URL, oldest first.
RUN tells separate runs apart: a run is one kickoff and its resumptions (its lineage);
two runs of the same crew both write to branch main unless told otherwise.

Options:
  --location P     the location (same as the LOCATION argument)
  --branch B       only this branch
  --run R          only this run (its id as shown in RUN, or any prefix of it)
  --json           machine-readable output`,
    load: () => import('./list.js'),
  },
  {
    name: 'info',
    onlyPrints: true,
    summary: 'one checkpoint: lineage, events, inputs, per-task status and outputs',
    usage: `Usage: crewline checkpoint info [REF] [options]

${referenceHelp}

Options:
  --location P     where bare ids are looked up
  --full           print whole task outputs instead of one-line previews
  --json           machine-readable output`,
    load: () => import('./info.js'),
  },
  {
    name: 'resume',
    summary: 'continue a run from a checkpoint on its own branch',
    usage: `Usage: crewline checkpoint resume [REF] [options]

Continues the run: completed tasks are skipped, the first unfinished one runs.
${referenceHelp}

Options:
${continueOptions}`,
    load: () => import('./resume.js'),
  },
  {
    name: 'fork',
    summary: 'continue a run from a checkpoint on a new branch',
    usage: `Usage: crewline checkpoint fork [REF] [options]

Continues the run on a new branch; the original branch is never changed.
${referenceHelp}

Options:
  --branch B             name of the new branch, one with no checkpoints yet
                         (default: generated, fork/<id>-<hex>)
${continueOptions}`,
    load: () => import('./fork.js'),
  },
  {
    name: 'diff',
    onlyPrints: true,
    summary: 'compare two checkpoints: time, branch, events, inputs, tasks, flow state',
    usage: `Usage: crewline checkpoint diff A B [options]

A and B are checkpoint references (see \`crewline checkpoint info --help\`). A changed
output is shown as a line diff: the changed lines with two lines of context, each cut to
the terminal's width around where it differs. For a flow, its completed methods and its
state (path by path) are compared too.

Options:
  --location P     where bare ids are looked up
  --full           every line of changed outputs, whole
  --json           machine-readable output`,
    load: () => import('./diff.js'),
  },
  {
    name: 'prune',
    summary: 'delete old checkpoints, per run',
    usage: `Usage: crewline checkpoint prune [LOCATION] --keep N and/or --older-than D [options]

Each run (a kickoff and its resumptions) keeps its own newest N (N is 1 or more);
--older-than D removes checkpoints older than D (a number and a unit: s, m, h, d,
w, e.g. 30m, 12h, 7d, 2w, 1d12h). With both, a checkpoint goes only when it is
beyond the newest N AND older than D. Never removed: a run's latest checkpoint,
a checkpoint a fork started from (listed as kept), and a fork's first checkpoint
(the one that links the fork to where it started).

Options:
  --location P     the location (same as the LOCATION argument)
  --keep N         keep the newest N checkpoints of each run (N >= 1)
  --older-than D   remove checkpoints older than D (each run keeps its latest)
  --branch B       only the runs on this branch
  --run R          only this run (its id as \`list\` shows it, or a prefix)
  --dry-run        show what would be removed, remove nothing
  --json           machine-readable output`,
    load: () => import('./prune.js'),
  },
  {
    name: 'serve',
    summary: 'the lineage explorer: a local web page over a location (graph, detail, diffs)',
    usage: `Usage: crewline checkpoint serve [LOCATION] [options]

Serves a web page (on 127.0.0.1 unless --host says otherwise) over a JSON directory,
SQLite database or Postgres URL: the lineage graph (a lane per branch, forks from their checkpoint, heads, pruned
parents), a checkpoint's detail, side-by-side diffs of two checkpoints, and live
updates as checkpoints are written. Open the URL it prints: its token is required.

Options:
  --location P     the location (same as the LOCATION argument)
  --port N         port to listen on (default: a free one)
  --host H         address to listen on (default: 127.0.0.1, this machine only);
                   0.0.0.0 lets other machines in, over plain HTTP, with a warning
  --allow-resume   allow resume, fork and edits of outputs and inputs from the page
                   (default: read-only)`,
    load: () => import('./serve.js'),
  },
  {
    name: 'flows',
    aliases: ['states'],
    onlyPrints: (args) => args[0] !== 'rerun',
    summary: 'persisted flow states (@persist): state id, flow, last method, time',
    usage: `Usage: crewline checkpoint flows [LOCATION] [options]
       crewline checkpoint flows rerun <STATE ID> --from <METHOD> [options]

Lists the flow state ids saved by @persist(), newest first. Resume one with
flow.kickoff({ inputs: { id } }). Runs of flows checkpointed without @persist are
counted, not listed: kicked off with their id they would run from the start; continue
one from its checkpoint with crewline checkpoint resume <checkpoint id>.

rerun runs METHOD of that saved state again, and every method after it, from the
save made before METHOD: the methods before it are restored, not run (nor paid for)
again. The same as flow.kickoff({ inputs: { id }, rerunFrom: METHOD }). The flow class
must be registered in crewline.config.ts.

Options:
  --location P     the location (same as the LOCATION argument)
  --flow NAME      only states of this flow
  --from METHOD    rerun: the method to run again
  --quiet          rerun: no progress lines, only the result
  --json           machine-readable output`,
    load: () => import('./flows.js'),
  },
  {
    name: 'worker',
    topLevel: true,
    summary: 'take queued runs from Postgres and run them (needs @crewline/worker)',
    usage: `Usage: crewline worker [options]

Takes runs of the crews and flows that crewline.config.ts registers (runs: defineRuns({...}))
from the queue in Postgres, up to --concurrency at once, checkpointing each under its own
lineage. SIGTERM or Ctrl+C: each run lets its model call in flight finish, checkpoints it and
goes back to the queue for another worker; then the worker exits 0.

Options:
  --location URL      the queue's Postgres URL (default: CREWLINE_WORKER_LOCATION;
                      the password from PGPASSWORD)
  --concurrency N     runs at once (default 1)
  --lease-ttl-ms MS   how long a hold lasts without renewal (default 20000)
  --json              one JSON line per event`,
    load: () => import('./worker.js'),
  },
  {
    name: 'runs',
    topLevel: true,
    onlyPrints: (args) => args[0] === 'list' || args[0] === 'show',
    summary: 'the queue of runs: list, show, open, cancel, enqueue, fork, resume (needs @crewline/worker)',
    usage: `Usage: crewline runs list|show|open|cancel|enqueue|fork|resume [options]

  crewline runs list [--status S] [--limit N]   newest first: status, attempts, task, tokens
  crewline runs show RUN                        one run: status, worker, attempts, current
                                                task, tokens so far, lineage, the question of
                                                a paused run, output or error
  crewline runs cancel RUN                      a queued or paused run is never taken; a
                                                running one stops; an ended run is left as
                                                it is ("already completed", exit code 0)
  crewline runs enqueue NAME [options]          queue a run of the crew or flow registered as NAME
      --input key=value       a kickoff input (repeatable; key:=<json> for non-strings);
                              for a crew crewline.config.ts here registers as NAME, a
                              {placeholder} the inputs leave out is refused (exit code 2),
                              an input nothing seems to use is queued with a warning, and
                              so is a crew with placeholders given no --input at all (the
                              runtime then leaves them as written)
      --idempotency-key K     the same key again gives the same run
      --priority N            higher runs first (default 0)
      --timeout-ms MS         fail an attempt running longer (default: none)
      --max-attempts N        failed attempts before the run fails (default 5)
      --create                create the queue if no worker has yet (else a queue
                              that does not exist is refused, exit code 3)
  crewline runs open RUN                        the run's checkpoints in the checkpoint browser
  crewline runs fork RUN [options]              queue a new run from a finished (completed,
                                                failed or cancelled) run's last checkpoint:
                                                tasks after an edit run again
      --input key=value       a changed input (repeatable)
      --set-output N=text     crews: task N starts with this output (repeatable)
      --rerun-from METHOD     flows: run METHOD and what follows it again
      --idempotency-key K     as for enqueue
      --priority N, --timeout-ms MS, --max-attempts N
                              as for enqueue; each left out is the forked run's own
                              (a run that timed out gets the same timeout: give a
                              longer --timeout-ms)
  crewline runs resume RUN --answer "text"      a paused run (its flow asked, see runs show)
                                                continues from its checkpoint with the answer

RUN is a run id or a unique start of one (as \`runs list\` shows them).

Options:
  --location URL   the queue's Postgres URL (default: CREWLINE_WORKER_LOCATION)
  --json           machine-readable output`,
    load: () => import('./runs.js'),
  },
];

/** The TUI: what `crewline checkpoint` does without a subcommand. */
export const browseCommand: CommandDefinition = {
  name: 'checkpoint',
  summary: 'browse, inspect, resume and fork checkpoints in a terminal UI',
  usage: `Usage: crewline checkpoint [LOCATION | --location P] [--lineage L]

Opens the checkpoint browser on P (default ./.checkpoints, else ./.checkpoints.db); with
--lineage, on the checkpoints of that one run: its id, or the start of it (crewline runs open
RUN does it for a queued run); a run P does not hold is refused.
Keys: arrows or j/k move, enter opens, tab switches panel, r refresh,
e resume, f fork, ? help, q quit. Needs an interactive terminal.`,
  load: () => import('./browse.js'),
};

/**
 * True when `word`, given to `crewline checkpoint` where a command name goes, is the browser's
 * location instead (as list, serve and flows take it): a path or URL (no command name has a dot, a
 * slash or a colon) or a file or directory that exists in `cwd`. A command name always wins, and a
 * bare word that names nothing here stays an unknown command (a typo of one).
 */
export function namesBrowserLocation(word: string, cwd: string): boolean {
  if (word.startsWith('-') || findCommand(word)) return false;
  return /[./\\:]/.test(word) || existsSync(resolve(cwd, word));
}

/** The command named `name` (or one of its aliases). */
export function findCommand(name: string): CommandDefinition | undefined {
  return commands.find((command) => command.name === name || command.aliases?.includes(name));
}

/** One help line per command: `  crewline checkpoint list  one line per checkpoint…`. */
function commandLines(listed: readonly CommandDefinition[]): string[] {
  const width = Math.max(...commands.map((command) => command.name.length));
  return listed.map((command) =>
    command.topLevel
      ? `  crewline ${command.name.padEnd(width + 11)}  ${command.summary}`
      : `  crewline checkpoint ${command.name.padEnd(width)}  ${command.summary}`,
  );
}

/** The names of the `crewline checkpoint` subcommands (not the top-level worker and runs). */
export const checkpointCommandNames: readonly string[] = commands
  .filter((command) => !command.topLevel)
  .map((command) => command.name);

/** `crewline checkpoint --help`: the browser's usage, then the subcommands it leads to. */
export function checkpointHelp(): string {
  return `${browseCommand.usage}

Commands:
${commandLines(commands.filter((command) => !command.topLevel)).join('\n')}

Run \`crewline checkpoint <command> --help\` for the options of one command.
`;
}

export function mainHelp(version: string): string {
  const lines = commandLines(commands);
  return `crewline ${version} - browse, inspect, resume and fork crewline checkpoints

Usage:
  crewline checkpoint [LOCATION]       ${browseCommand.summary}
${lines.join('\n')}

The \`checkpoint\` word may be left out: \`crewline list\` is \`crewline checkpoint list\`.
Run \`crewline checkpoint <command> --help\` for the options of one command.

A crewline.config.ts in the current directory (tools, models, flows by name) is loaded
before resume, fork and the browser. NO_COLOR disables colour.
Exit codes: 0 ok, 1 failed (or cannot start), 2 bad usage, 3 not found or ambiguous,
4 unreadable checkpoint or database, 5 provider package missing, 6 cannot rebuild (register it in
crewline.config.ts), 7 server cannot be reached, 70 internal error, 130 interrupted.
`;
}
