import {
  type BaseEvent,
  CheckpointCompletedEvent,
  CrewlineError,
  eventBus,
  SigIntEvent,
} from '@crewline/events';
import { Crew, type CrewOutput, registerProject } from '@crewline/runtime';
import projectConfig from '../crewline.config.js';
import { callReport } from './call-report.js';
import { branchCheckpoints, loadTutorialCheckpoint, readSibling, savedTasks } from './checkpoint-store.js';
import { buildTutorialCrew, RESEARCH_TASK } from './crew.js';
import { chooseModel, type ModelChoice } from './model-choice.js';
import { LATENCY_VARIABLE, latencyFrom, TUTORIAL_MODEL_ID, tutorialOfflineModel } from './offline-model.js';
import { DEFAULT_TOPIC, type TutorialOptions, USAGE } from './options.js';
import { formatElapsed, ProgressView } from './progress/progress-view.js';
import { paint, type TextOutput, terminalStyle } from './progress/terminal-style.js';
import {
  chooseStorage,
  displayPath,
  resolveReferenceInput,
  type StorageChoice,
  shellQuote,
} from './storage.js';

export interface TutorialIO {
  stdout: TextOutput;
  env: Readonly<Record<string, string | undefined>>;
  /** The directory the user typed the command in: relative paths and `./.checkpoints` are resolved there. */
  baseDirectory: string;
}

/** Runs `pnpm demo` with parsed options; resolves to the exit code. */
export async function runTutorial(options: TutorialOptions, io: TutorialIO): Promise<number> {
  const out = (line = '') => io.stdout.write(`${line}\n`);
  if (options.mode === 'help') {
    out(USAGE);
    return 0;
  }
  // One offline model for the whole process, made before anything resolves the id, so `--latency`
  // applies and its `calls` count every request.
  const latencyText = options.latencyMs ?? io.env[LATENCY_VARIABLE];
  tutorialOfflineModel({ ...io.env, [LATENCY_VARIABLE]: latencyText });
  registerProject(projectConfig);

  const style = terminalStyle(io.stdout, io.env);
  const colors = paint(style.color);
  out(colors.bold('crewline tutorial: resume a failing crew'));
  const storage = await chooseStorage(options.storage, options.location, io.baseDirectory);
  const session = new Session(io, style, storage);

  if (options.mode === 'run') {
    const model = chooseModel(options, io.env);
    out(`  Model:       ${describeModel(model, latencyText)}`);
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
      out(
        `  pnpm demo --fork ${shellQuote(first)} --edit-research ${shellQuote('Checkpoints are cheap; re-running a finished task is not.')}`,
      );
    }
    return 0;
  }

  const reference = resolveReferenceInput(options.reference!, io.baseDirectory, storage.location);
  const loaded = await loadTutorialCheckpoint(reference);
  const metadata = loaded.document.metadata;
  const shownReference = displayPath(loaded.checkpoint.reference, io.baseDirectory);
  const saved = savedTasks(loaded.document);
  out(`  Checkpoint:  ${shownReference}`);
  out(
    `               branch ${metadata.branch}, written on ${metadata.trigger}, ${saved.filter((task) => task.status === 'completed').length} of ${saved.length} tasks done`,
  );

  if (options.mode === 'resume') {
    // The tutorial's way: the same crew, built by the same code, continued from the checkpoint.
    const model = chooseModel(options, io.env);
    out(`  Model:       ${describeModel(model, latencyText)}`);
    const crew = buildTutorialCrew({ llm: model.id, checkpoint: storage.checkpoint });
    out('');
    out(`Resuming on branch ${metadata.branch}.`);
    const output = await session.run(crew, () =>
      crew.kickoff({ fromCheckpoint: { restoreFrom: loaded.checkpoint.reference } }),
    );
    session.finish(crew, output);
    return 0;
  }

  // Fork: the crew is rebuilt from the checkpoint alone, on a new branch.
  const originalBranch = metadata.branch;
  const before = await branchCheckpoints(loaded, originalBranch);
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
        `the research task is not finished in ${shownReference}, so there is no output to edit; fork a checkpoint written after it (the first one of a run)`,
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
  const output = await session.run(crew, () => crew.kickoff());
  session.finish(crew, output);

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
  const original = await finishedOnBranch(loaded, originalBranch, metadata.lineageId, after);
  if (original !== undefined) {
    out(`On branch ${originalBranch} the Writer had written:`);
    out(indent(original));
  }
  out('');
  out('See both branches:');
  out(`  pnpm crewline checkpoint list ${shellQuote(displayPath(loaded.location, io.baseDirectory))}`);
  out(
    `  pnpm crewline checkpoint --location ${shellQuote(displayPath(loaded.location, io.baseDirectory))}   (browser)`,
  );
  return 0;
}

/** The writer's output in the newest finished checkpoint of the same run on `branch`, if any. */
async function finishedOnBranch(
  loaded: Awaited<ReturnType<typeof loadTutorialCheckpoint>>,
  branch: string,
  lineageId: string,
  entries: Awaited<ReturnType<typeof branchCheckpoints>>,
): Promise<string | undefined> {
  const finished = entries
    .filter((entry) => entry.lineageId === lineageId && entry.branch === branch)
    .filter((entry) =>
      entry.entities.some((entity) => entity.total !== undefined && entity.completed === entity.total),
    )
    .at(-1);
  if (!finished) return undefined;
  const document = await readSibling(loaded, finished.id);
  return savedTasks(document).at(-1)?.output;
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
  return storage.kind === 'sqlite'
    ? `${storage.displayLocation} (SQLite, one database file; --sqlite)`
    : `${storage.displayLocation}/ (JSON, one file per finished task; --sqlite for SQLite)`;
}

function firstLine(text: string | undefined): string {
  if (text === undefined) return '(none)';
  const line = text.split('\n')[0] ?? '';
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** One crew run in this process: progress, checkpoint notes, and what to type after Ctrl+C. */
class Session {
  readonly #io: TutorialIO;
  readonly #style: ReturnType<typeof terminalStyle>;
  readonly #storage: StorageChoice;
  #view: ProgressView | undefined;
  #lastCheckpoint: string | undefined;
  #lastCheckpointDone = 0;
  /** Requests the offline model had received before this run. */
  #callsBefore = 0;
  /** The first checkpoint this process wrote (shown relative to where the command was typed). */
  firstCheckpoint: string | undefined;

  constructor(io: TutorialIO, style: ReturnType<typeof terminalStyle>, storage: StorageChoice) {
    this.#io = io;
    this.#style = style;
    this.#storage = storage;
  }

  async run(crew: Crew, kickoff: () => Promise<CrewOutput>): Promise<CrewOutput> {
    const view = new ProgressView({
      output: this.#io.stdout,
      style: this.#style,
      taskLabels: crew.tasks.map((task) => task.name ?? task.description),
    });
    this.#view = view;
    this.#callsBefore = tutorialOfflineModel().calls.length;
    const colors = paint(this.#style.color);
    // Tasks this process has seen start, or has already reported as restored.
    const noted = new Set<number>();
    const noteSkipped = (upTo: number) => {
      crew.tasks.slice(0, upTo).forEach((task, index) => {
        if (task.status !== 'completed' || noted.has(index)) return;
        noted.add(index);
        const how = task.output?.edited
          ? 'was edited before this run: the edited output is used'
          : 'was done in the checkpoint: its saved output is used';
        view.line(
          `${colors.green('↷')} ${capitalize(view.taskTitle(index))} (${task.agent?.role ?? 'agent'}) ${how}, it is not run again`,
        );
      });
    };
    const offAny = eventBus.onAny((_source: unknown, event: BaseEvent) => {
      if (event.type === 'task_started' && event.context.taskIndex !== undefined) {
        noteSkipped(event.context.taskIndex);
        noted.add(event.context.taskIndex);
      }
      view.handle(event as unknown as Parameters<ProgressView['handle']>[0]);
    });
    const offCheckpoint = eventBus.on(
      CheckpointCompletedEvent,
      (_source: unknown, event: CheckpointCompletedEvent) => {
        const shown = displayPath(event.reference, this.#io.baseDirectory);
        this.#lastCheckpoint = shown;
        this.firstCheckpoint ??= shown;
        const done = crew.tasks.filter((task) => task.status === 'completed').length;
        this.#lastCheckpointDone = done;
        view.line(`  ${colors.cyan('●')} Checkpoint saved: ${shown} (branch ${event.branch})`);
        if (done < crew.tasks.length) {
          view.line(
            colors.dim(`    If you stop now, continue with: pnpm demo --resume ${shellQuote(shown)}`),
          );
        }
      },
    );
    const offSignal = eventBus.on(SigIntEvent, () => this.#interrupted(crew));
    try {
      const output = await kickoff();
      noteSkipped(crew.tasks.length);
      return output;
    } finally {
      view.stop();
      offAny();
      offCheckpoint();
      offSignal();
    }
  }

  /** After Ctrl+C: the runtime is about to end the process; say exactly how to continue. */
  #interrupted(crew: Crew): void {
    this.#view?.stop();
    const colors = paint(this.#style.color);
    const out = (line = '') => this.#io.stdout.write(`${line}\n`);
    out('');
    out(colors.yellow('Interrupted (Ctrl+C).'));
    if (this.#lastCheckpoint === undefined) {
      out('No checkpoint was written yet: the first task had not finished. Run `pnpm demo` again.');
      return;
    }
    const reference = shellQuote(this.#lastCheckpoint);
    out(
      `The last checkpoint, ${this.#lastCheckpoint}, has ${this.#lastCheckpointDone} of ${crew.tasks.length} tasks done; the work after it is not saved.`,
    );
    out('Continue from it (finished tasks are not run again) with either:');
    out(`  pnpm demo --resume ${reference}`);
    out(`  pnpm crewline checkpoint resume ${reference}`);
  }

  finish(crew: Crew, output: CrewOutput): void {
    const view = this.#view;
    const colors = paint(this.#style.color);
    const out = (line = '') => this.#io.stdout.write(`${line}\n`);
    const branch = crew.lastRun?.state.lineage.branch ?? 'main';
    out('');
    out(
      colors.green(
        `Crew finished in ${formatElapsed(view?.elapsedMs ?? 0)}: ${plural(view?.modelCalls ?? 0, 'model call')}, ${view?.tokens ?? 0} tokens in this run.`,
      ),
    );
    const calls = callReport(tutorialOfflineModel()).calls.slice(this.#callsBefore);
    if (calls.length > 0) {
      const byRole = new Map<string, number>();
      for (const call of calls) {
        const role = call.agentRole ?? 'unknown';
        byRole.set(role, (byRole.get(role) ?? 0) + 1);
      }
      const roles = crew.agents.map((agent) => `${agent.role} ${byRole.get(agent.role) ?? 0}`).join(', ');
      out(`Requests the offline model received in this run: ${calls.length} (${roles}).`);
    }
    out(`The Writer's result on branch ${branch}:`);
    out(indent(output.raw));
    if (this.#lastCheckpoint !== undefined) out(`Last checkpoint: ${this.#lastCheckpoint}`);
    if (this.#storage.kind === 'json' && this.#lastCheckpoint === undefined) {
      out(colors.dim('(no checkpoint was written by this process)'));
    }
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function capitalize(text: string): string {
  return text.length === 0 ? text : text[0]!.toUpperCase() + text.slice(1);
}

export { DEFAULT_TOPIC };
