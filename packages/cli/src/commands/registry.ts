import type { CommandDefinition } from './command.js';

const referenceHelp = `REF is a checkpoint file, a directory or .db file (its latest checkpoint), path#id, or a
checkpoint id or unique id prefix looked up in --location (default ./.checkpoints or
./.checkpoints.db). Omitted: the latest checkpoint of the default location.`;

const continueOptions = `  --location P           where bare ids are looked up
  --input key=value      change a kickoff input (repeatable; key:=<json> for non-strings);
                         only tasks that have not run yet see the new value
  --set-output N=text    replace the output of completed task N (as numbered by \`info\`);
                         every later task runs again (repeatable)
  --answer "text"        the answer a paused flow waits for (its ask()); it continues with it
  --on-conflict fork     when another process is continuing this run right now (SQLite,
                         Postgres; JSON on this machine), continue on a new branch instead
                         of stopping with the holder's name (default: error)
  --quiet                no progress lines, only the result`;

/** Every `crewline checkpoint` subcommand, in the order help lists them. */
export const commands: readonly CommandDefinition[] = [
  {
    name: 'list',
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
    summary: 'compare two checkpoints: time, branch, events, inputs, tasks',
    usage: `Usage: crewline checkpoint diff A B [options]

A and B are checkpoint references (see \`crewline checkpoint info --help\`).

Options:
  --location P     where bare ids are looked up
  --json           machine-readable output`,
    load: () => import('./diff.js'),
  },
  {
    name: 'prune',
    summary: 'delete old checkpoints, per run',
    usage: `Usage: crewline checkpoint prune [LOCATION] --keep N | --older-than D [options]

Each run (a kickoff and its resumptions) keeps its own newest N (N is 1 or more);
--older-than D removes checkpoints older than D (a number and a unit: s, m, h, d,
w, e.g. 30m, 12h, 7d, 2w). With both, a checkpoint goes only when it is beyond the
newest N AND older than D. Never removed: a run's latest checkpoint, and a
checkpoint a fork started from.

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
    name: 'flows',
    aliases: ['states'],
    summary: 'persisted flow states (@persist): state id, flow, last method, time',
    usage: `Usage: crewline checkpoint flows [LOCATION] [options]

Lists the flow state ids saved by @persist(), newest last. Resume one with
flow.kickoff({ inputs: { id } }).

Options:
  --location P     the location (same as the LOCATION argument)
  --json           machine-readable output`,
    load: () => import('./flows.js'),
  },
];

/** The TUI: what `crewline checkpoint` does without a subcommand. */
export const browseCommand: CommandDefinition = {
  name: 'checkpoint',
  summary: 'browse, inspect, resume and fork checkpoints in a terminal UI',
  usage: `Usage: crewline checkpoint [--location P]

Opens the checkpoint browser on P (default ./.checkpoints, else ./.checkpoints.db).
Keys: arrows or j/k move, enter opens, tab switches panel, r refresh,
e resume, f fork, ? help, q quit. Needs an interactive terminal.`,
  load: () => import('./browse.js'),
};

/** The command named `name` (or one of its aliases). */
export function findCommand(name: string): CommandDefinition | undefined {
  return commands.find((command) => command.name === name || command.aliases?.includes(name));
}

export function mainHelp(version: string): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  const lines = commands.map(
    (command) => `  crewline checkpoint ${command.name.padEnd(width)}  ${command.summary}`,
  );
  return `crewline ${version} - browse, inspect, resume and fork crewline checkpoints

Usage:
  crewline checkpoint [--location P]   ${browseCommand.summary}
${lines.join('\n')}

The \`checkpoint\` word may be left out: \`crewline list\` is \`crewline checkpoint list\`.
Run \`crewline checkpoint <command> --help\` for the options of one command.

A crewline.config.ts in the current directory (tools, models, flows by name) is loaded
before resume, fork and the browser. NO_COLOR disables colour.
Exit codes: 0 ok, 1 failed, 2 bad usage, 3 not found or ambiguous, 4 unreadable
checkpoint, 5 provider missing, 6 cannot rebuild (register it in crewline.config.ts),
70 internal error, 130 interrupted.
`;
}
