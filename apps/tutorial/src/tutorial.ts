import { CrewlineError } from '@crewline/events';
import { Crew, registerProject } from '@crewline/runtime';
import type { LoadedCheckpoint } from '@crewline/runtime-state';
import projectConfig from '../crewline.config.js';
import {
  branchCheckpoints,
  loadTutorialCheckpoint,
  readSibling,
  type SavedTask,
  savedTasks,
} from './checkpoint-store.js';
import { buildTutorialCrew, RESEARCH_TASK } from './crew.js';
import { chooseModel, type ModelChoice } from './model-choice.js';
import { LATENCY_VARIABLE, latencyFrom, TUTORIAL_MODEL_ID, tutorialOfflineModel } from './offline-model.js';
import { type TutorialOptions, USAGE } from './options.js';
import { formatElapsed } from './progress/progress-view.js';
import { type Paint, paint, terminalStyle } from './progress/terminal-style.js';
import { RunSession, type TutorialIO } from './run-session.js';
import {
  chooseStorage,
  displayPath,
  resolveReferenceInput,
  type StorageChoice,
  shellQuote,
} from './storage.js';
import { firstLine, indent, plural } from './text.js';

export type { TutorialIO } from './run-session.js';

/** What every mode needs: where to write, how it looks, the options and the storage. */
interface Context {
  io: TutorialIO;
  options: TutorialOptions;
  out: (line?: string) => void;
  colors: Paint;
  session: RunSession;
  storage: StorageChoice;
  /** The offline model's delay per call as given (flag or variable), for the "Model:" line. */
  latencyText: string | undefined;
}

/** Runs `pnpm demo` with parsed options; resolves to the exit code. */
export async function runTutorial(options: TutorialOptions, io: TutorialIO): Promise<number> {
  const out = (line = '') => io.stdout.write(`${line}\n`);
  if (options.mode === 'help') {
    out(USAGE);
    return 0;
  }
  // One offline model for the whole process, made before anything resolves its id, so that
  // `--latency` applies and its `calls` count every request.
  const latencyText = options.latencyMs ?? io.env[LATENCY_VARIABLE];
  tutorialOfflineModel({ ...io.env, [LATENCY_VARIABLE]: latencyText });
  registerProject(projectConfig);

  const style = terminalStyle(io.stdout, io.env);
  const colors = paint(style.color);
  out(colors.bold('crewline tutorial: resume a failing crew'));
  const context: Context = {
    io,
    options,
    out,
    colors,
    session: new RunSession(io, style),
    storage: await chooseStorage(options.storage, options.location, io.baseDirectory),
    latencyText,
  };
  if (options.mode === 'run') return runFromStart(context);

  const loaded = await loadTutorialCheckpoint(
    resolveReferenceInput(options.reference!, io.baseDirectory, context.storage.location),
  );
  const { metadata } = loaded.document;
  const saved = savedTasks(loaded.document);
  const done = saved.filter((task) => task.status === 'completed').length;
  out(`  Checkpoint:  ${displayPath(loaded.checkpoint.reference, io.baseDirectory)}`);
  out(
    `               branch ${metadata.branch}, written on ${metadata.trigger}, ${done} of ${saved.length} tasks done`,
  );
  return options.mode === 'resume' ? resume(context, loaded) : fork(context, loaded, saved);
}

async function runFromStart(context: Context): Promise<number> {
  const { out, colors, options, storage, session } = context;
  const model = chooseModel(options, context.io.env);
  out(`  Model:       ${describeModel(model, context.latencyText)}`);
  out(`  Checkpoints: ${describeStorage(storage)}`);
  const crew = buildTutorialCrew({ llm: model.id, checkpoint: storage.checkpoint });
  out('');
  out(`Running the crew on "${options.topic}": ${crew.tasks.length} tasks (research, then write).`);
  out(
    colors.dim(
      'Press Ctrl+C once the first task is done: its checkpoint lets you continue without doing it again.',
    ),
  );
  const output = await session.run(crew, () => crew.kickoff({ inputs: { topic: options.topic } }));
  session.finish(crew, output);
  const first = session.firstCheckpoint;
  if (first !== undefined) {
    out('');
    out('Next, try a what-if: fork from the first checkpoint with different research, and compare:');
    const edit = shellQuote('Checkpoints are cheap; re-running a finished task is not.');
    out(`  pnpm demo --fork ${shellQuote(first)} --edit-research ${edit}`);
  }
  return 0;
}

/** The tutorial's way to resume: the same crew, built by the same code, continued from the checkpoint. */
async function resume(context: Context, loaded: LoadedCheckpoint): Promise<number> {
  const { out, options, storage, session } = context;
  const model = chooseModel(options, context.io.env);
  out(`  Model:       ${describeModel(model, context.latencyText)}`);
  const crew = buildTutorialCrew({ llm: model.id, checkpoint: storage.checkpoint });
  out('');
  out(await resumeHeadline(loaded));
  const output = await session.run(crew, () =>
    crew.kickoff({ fromCheckpoint: { restoreFrom: loaded.checkpoint.reference } }),
  );
  session.finish(crew, output);
  return 0;
}

/**
 * What resuming does: a checkpoint its run went past is continued on a new branch by the runtime (so
 * nothing of that run is overwritten), the newest one on its own branch. Said before the run starts.
 */
async function resumeHeadline(loaded: LoadedCheckpoint): Promise<string> {
  const { id, branch, lineageId } = loaded.document.metadata;
  const run = (await branchCheckpoints(loaded, branch)).filter((entry) => entry.lineageId === lineageId);
  const newest = run.at(-1);
  if (newest === undefined || newest.id === id) return `Resuming on branch ${branch}.`;
  return `Resuming an older checkpoint: its run went on to ${newest.id}, so this continues on a new branch (fork/...) and branch ${branch} stays as it is.`;
}

/** `--branch NAME` names a branch the location has checkpoints on already. */
function branchExists(branch: string, location: string): CrewlineError {
  return new CrewlineError(
    'tutorial',
    'conflict',
    `--branch ${branch}: branch "${branch}" already exists in ${location}; fork onto another branch with --branch NAME, or leave --branch out to generate one`,
  );
}

/** A fork: the crew rebuilt from the checkpoint alone, on a new branch, maybe with edited research. */
async function fork(context: Context, loaded: LoadedCheckpoint, saved: SavedTask[]): Promise<number> {
  const { out, colors, options, session, io } = context;
  const { metadata } = loaded.document;
  const originalBranch = metadata.branch;
  const before = await branchCheckpoints(loaded, originalBranch);
  // Refused before "Forking onto branch …" is said of a fork that does not happen, and in the demo's
  // words: the runtime's own refusal (at kickoff) names its `branch` option, not `--branch`.
  if (options.branch !== undefined && (await branchCheckpoints(loaded, options.branch)).length > 0)
    throw branchExists(options.branch, displayPath(loaded.location, io.baseDirectory));
  const crew = await Crew.fork(
    { restoreFrom: loaded.checkpoint.reference },
    options.branch !== undefined ? { branch: options.branch } : {},
  );
  const models = [...new Set(crew.agents.map((agent) => agent.modelId))];
  out(`  Model:       ${models.join(', ')} (as saved in the checkpoint)`);
  if (options.editResearch !== undefined) {
    if (saved[RESEARCH_TASK]?.status !== 'completed') {
      throw new CrewlineError(
        'tutorial',
        'invalid_state',
        `the research task is not finished in ${displayPath(loaded.checkpoint.reference, io.baseDirectory)}, so there is no output to edit; fork a checkpoint written after it (the first one of a run)`,
      );
    }
    crew.setTaskOutput(RESEARCH_TASK, options.editResearch);
  }
  out('');
  out(`Forking onto branch ${crew.checkpointBranch}; branch ${originalBranch} stays as it is.`);
  if (options.editResearch !== undefined) {
    out(`  Research output replaced by: "${options.editResearch}"`);
    out('  Every task after it runs again against the edited research.');
  }
  const output = await session.run(crew, () =>
    crew.kickoff().catch((error: unknown) => {
      // Another process made the branch since the check above: the same words.
      if (
        options.branch !== undefined &&
        CrewlineError.hasCode(error, 'conflict') &&
        error.details?.branch === options.branch
      )
        throw branchExists(options.branch, displayPath(loaded.location, io.baseDirectory));
      throw error;
    }),
  );
  session.finish(crew, output);

  // What the fork changed, and what it did not.
  const after = await branchCheckpoints(loaded, originalBranch);
  const unchanged =
    after.length === before.length && after.every((entry, index) => entry.id === before[index]?.id);
  out('');
  out(
    unchanged
      ? `Branch ${originalBranch} is untouched: ${plural(before.length, 'checkpoint')}, the same as before the fork.`
      : colors.red(
          `Branch ${originalBranch} changed during the fork: ${before.length} -> ${after.length} checkpoints.`,
        ),
  );
  const forkBranch = crew.lastRun?.state.lineage.branch ?? String(crew.checkpointBranch);
  const research = [
    [forkBranch, crew.tasks[RESEARCH_TASK]?.output?.raw],
    [originalBranch, saved[RESEARCH_TASK]?.output],
  ] as const;
  const width = Math.max(...research.map(([branch]) => branch.length));
  for (const [branch, text] of research) {
    out(`Research the Writer read on branch ${`${branch}:`.padEnd(width + 1)} ${firstLine(text)}`);
  }
  const original = await finishedOnBranch(loaded, originalBranch, after);
  if (original !== undefined) {
    out(`On branch ${originalBranch} the Writer had written:`);
    out(indent(original));
  }
  const location = shellQuote(displayPath(loaded.location, io.baseDirectory));
  out('');
  out('See both branches:');
  out(`  pnpm crewline checkpoint list ${location}`);
  out(`  pnpm crewline checkpoint --location ${location}   (terminal browser)`);
  out(`  pnpm crewline checkpoint serve ${location}        (web page)`);
  return 0;
}

/** The writer's output in the newest finished checkpoint of the same run on `branch`, if any. */
async function finishedOnBranch(
  loaded: LoadedCheckpoint,
  branch: string,
  entries: Awaited<ReturnType<typeof branchCheckpoints>>,
): Promise<string | undefined> {
  const lineageId = loaded.document.metadata.lineageId;
  const finished = entries
    .filter((entry) => entry.lineageId === lineageId && entry.branch === branch)
    .filter((entry) =>
      entry.entities.some((entity) => entity.total !== undefined && entity.completed === entity.total),
    )
    .at(-1);
  if (!finished) return undefined;
  return savedTasks(await readSibling(loaded, finished.id)).at(-1)?.output;
}

function describeModel(model: ModelChoice, latencyText: string | undefined): string {
  if (!model.offline) return `${model.id} (${model.reason})`;
  const pace = model.id === TUTORIAL_MODEL_ID ? `, ${formatElapsed(latencyFrom(latencyText))} per call` : '';
  const lines = [
    `${model.id} (the offline model: no key, no network${pace}; answers start with [offline model])`,
  ];
  if (model.reason.startsWith('no ')) {
    lines.push('For a real model set OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_COMPATIBLE_BASE_URL.');
  }
  return lines.join('\n               ');
}

function describeStorage(storage: StorageChoice): string {
  switch (storage.kind) {
    case 'json':
      return `${storage.displayLocation}/ (JSON, one file per finished task; --sqlite for SQLite)`;
    case 'sqlite':
      return `${storage.displayLocation} (SQLite, one database file)`;
    case 'postgres':
      // The printed references carry no password (the provider keeps it in memory): a new process
      // running one of them needs it from PGPASSWORD, as the CLI does.
      return `${storage.displayLocation} (Postgres; the password is never printed: set PGPASSWORD to run the commands below)`;
    default:
      return `${storage.displayLocation} (${storage.kind})`;
  }
}
