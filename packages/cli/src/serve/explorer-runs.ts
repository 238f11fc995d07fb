import { randomUUID } from 'node:crypto';
import { type ContinuedSinceReadAdvice, continuedSinceReadMessage } from '@crewline/runtime/internal';
import {
  type CheckpointMetadata,
  type CheckpointProvider,
  isValidBranchName,
  type ProviderRegistry,
  readDocument,
} from '@crewline/runtime-state';
import { branchNameRule, newerHeadId, shellWord } from '@crewline/runtime-state/internal';
import { refuseTakenBranch } from '../commands/taken-branch.js';
import { parseAssignments } from '../core/args.js';
import { checkBeforeRunning } from '../core/check-before-running.js';
import { cliError, usageError } from '../core/cli-error.js';
import { continueRun, type WrittenCheckpoint } from '../core/continue-run.js';
import { continuedInputs } from '../core/continued-inputs.js';
import { continuedSinceReadInWords } from '../core/continued-since-read.js';
import { type DocumentView, primaryEntity, viewDocument } from '../core/document-view.js';
import { entityLabel } from '../core/entity-label.js';
import { shortCheckpointId } from '../core/format.js';
import { leaseHeld, leaseWordsOfPage } from '../core/lease-held.js';
import { displayPath } from '../core/location.js';
import { nothingToRunInWords, runAgainWordsOfPage } from '../core/nothing-to-run.js';
import { type StartOverFlags, startOverCommand } from '../core/start-over-command.js';
import { parseTaskOutputs } from '../core/task-outputs.js';
import { RunWarnings } from './run-warnings.js';

/** What the page asks for: the CLI's `resume`/`fork` options, in the same words. */
export interface RunRequest {
  /** Id of the checkpoint to continue. */
  checkpoint: string;
  mode: 'resume' | 'fork';
  /** Fork only: the new branch (generated when absent). */
  branch?: string;
  /** `--input` values: `key=value` or `key:=<json>`. */
  inputs?: string[];
  /** `--set-output` values: `N=text`, N the task number `info` shows. */
  outputs?: string[];
  /** `--answer`: the answer a paused flow waits for (its `ask()`), given to the method that asked. */
  answer?: string;
  /**
   * Resume only: the id (in full) of the latest checkpoint of the checkpoint's run when the page
   * planned the resume (the checkpoint itself when the page showed it as the latest; the plan's
   * `olderCheckpoint.headId` otherwise). A run gone on since is refused (`conflict`, 409) before
   * anything runs: the user's time reading the plan is not a window in which another process's
   * continuation makes the resume pay for that work again. Default: the latest when the request
   * comes.
   */
  head?: string;
}

/** The fields a run request takes: any other is refused, so that a misspelt one is not dropped. */
const requestFields = ['checkpoint', 'mode', 'branch', 'inputs', 'outputs', 'answer', 'head'] as const;

export interface RunRecord {
  id: string;
  checkpoint: string;
  mode: 'resume' | 'fork';
  status: 'running' | 'finished' | 'paused' | 'failed';
  /** Progress lines, as `crewline checkpoint resume` prints them. */
  lines: string[];
  branch?: string;
  lastCheckpoint?: string;
  output?: string;
  error?: string;
  /**
   * A run that ended paused: the flow's method that waits and its question (what `resume` prints as
   * `Paused: … waits for an answer in …`). Answered from the form of the run's last checkpoint.
   */
  pause?: { method: string; message: string };
}

function stringList(value: unknown, name: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
    throw usageError(`${name} must be a list of strings`);
  return value as string[];
}

/** Checks the body of a run request; a wrong field is a usage error naming it. */
export function parseRunRequest(body: unknown): RunRequest {
  if (body === null || typeof body !== 'object') throw usageError('a run request is a JSON object');
  const record = body as Record<string, unknown>;
  const unknown = Object.keys(record).find((key) => !(requestFields as readonly string[]).includes(key));
  if (unknown !== undefined)
    throw usageError(
      `unknown field ${JSON.stringify(unknown)} in the run request; it takes ${requestFields.slice(0, -1).join(', ')} and ${requestFields.at(-1)}`,
    );
  if (record.answer !== undefined && typeof record.answer !== 'string')
    throw usageError('answer must be a string: the answer a paused flow waits for');
  if (typeof record.checkpoint !== 'string' || record.checkpoint === '')
    throw usageError('checkpoint must be the id of the checkpoint to continue');
  if (record.mode !== 'resume' && record.mode !== 'fork') throw usageError('mode must be "resume" or "fork"');
  if (record.branch !== undefined && (typeof record.branch !== 'string' || record.mode !== 'fork'))
    throw usageError('branch is a string, and only for a fork');
  // Checked here, so the form says it at once rather than a run that fails as it starts.
  if (typeof record.branch === 'string' && record.branch !== '' && !isValidBranchName(record.branch))
    throw usageError(`branch name ${JSON.stringify(record.branch)} is not allowed; ${branchNameRule}`);
  if (
    record.head !== undefined &&
    (typeof record.head !== 'string' || record.head === '' || record.mode !== 'resume')
  )
    throw usageError(
      'head is the id of the latest checkpoint of the run when the page planned the resume, and only for a resume',
    );
  const inputs = stringList(record.inputs, 'inputs');
  const outputs = stringList(record.outputs, 'outputs');
  return {
    checkpoint: record.checkpoint,
    mode: record.mode,
    ...(typeof record.branch === 'string' && record.branch !== '' ? { branch: record.branch } : {}),
    ...(inputs ? { inputs } : {}),
    ...(outputs ? { outputs } : {}),
    ...(typeof record.answer === 'string' ? { answer: record.answer } : {}),
    ...(typeof record.head === 'string' ? { head: record.head } : {}),
  };
}

/**
 * An answer to a flow that does not wait for one is refused before anything runs, as the CLI refuses
 * `--answer` then; a checkpoint without a flow is left to the runtime, which says an answer only
 * continues a flow.
 */
function refuseAnswerNotAwaited(answer: string | undefined, view: DocumentView): void {
  if (answer === undefined) return;
  const flow = primaryEntity(view.entities);
  if (flow?.kind !== 'flow' || flow.pause !== undefined) return;
  throw usageError(
    `${entityLabel('flow', flow.name)} does not wait for an answer in this checkpoint (${flow.status ?? 'not paused'}), so answer has nothing to answer; leave the answer empty`,
  );
}

export interface ExplorerRunsOptions {
  /** Project directory: its crewline.config.ts is loaded before a run. */
  cwd: string;
  providers: ProviderRegistry;
  provider: CheckpointProvider;
  location: string;
  /** The reference a checkpoint id is continued from (its listing entry's). */
  reference: (id: string) => Promise<string>;
  onUpdate: (event: 'progress' | 'run', data: unknown) => void;
  /**
   * How many runs may run at once; one more is refused (`conflict`) until one ends. A double submit
   * or a leaked token must not start runs that cost money without bound. Default 3.
   */
  maxConcurrentRuns?: number;
  /** How many ended runs {@link ExplorerRuns.list} keeps, the oldest forgotten first. Default 50. */
  maxFinishedRuns?: number;
}

/**
 * How the page says the two ways on after a run was continued since the checkpoint was read as its
 * latest: its "Continue from here" form, on the run's latest or on the checkpoint read.
 */
function pageAdvice(checkpointId: string, headId: string): ContinuedSinceReadAdvice {
  return {
    resumeAgain: `open checkpoint ${headId}, the run's latest, and resume it under "Continue from here"`,
    forkInstead: `choose "fork onto a new branch" under "Continue from here" on ${checkpointId} and press Run`,
  };
}

/** What makes two requests the same run: the checkpoint, the mode and every option, as sent. */
function requestKey(request: RunRequest): string {
  return JSON.stringify([
    request.checkpoint,
    request.mode,
    request.branch ?? null,
    request.inputs ?? [],
    request.outputs ?? [],
    request.answer ?? null,
  ]);
}

/**
 * The runs a page started: each goes through the same path as `crewline checkpoint resume|fork`
 * (`--input` and `--set-output` parsed and checked by the CLI's own functions, then `continueRun`),
 * in this process, its progress lines handed to `onUpdate` as they come.
 */
export class ExplorerRuns {
  readonly #runs = new Map<string, RunRecord>();
  /** Requests being checked or running, by {@link requestKey}: taken before the first await. */
  readonly #active = new Map<string, RunRecord | undefined>();
  /**
   * The branch each active fork request names, by {@link requestKey}: a branch with no checkpoint yet
   * passes `refuseTakenBranch`, so two forks onto it would both run and write one branch twice.
   */
  readonly #forkBranches = new Map<string, string>();
  readonly #options: ExplorerRunsOptions;
  readonly #warnings = new RunWarnings();
  /** The last checkpoint each running run wrote, by run id: what an interrupted one continues from. */
  readonly #written = new Map<string, WrittenCheckpoint>();
  /** What each running run was started with, by run id: the command that starts it over repeats it. */
  readonly #startedWith = new Map<string, StartOverFlags>();

  constructor(options: ExplorerRunsOptions) {
    this.#options = options;
  }

  list(): RunRecord[] {
    return [...this.#runs.values()];
  }

  get running(): number {
    return this.list().filter((run) => run.status === 'running').length;
  }

  /**
   * What stopping the server (Ctrl+C) does to the runs still running, one line each: the run stops
   * with the process, so each says where it got and the command that continues it, as
   * `crewline checkpoint resume|fork` says on Ctrl+C (`interrupted; the run stopped after checkpoint
   * … on branch …; continue it with: crewline checkpoint resume …`), naming the CLI as `command`
   * (the explorer's `command`: how it was run, `pnpm crewline` under pnpm; see commandName).
   */
  interruptions(cwd: string, command: string): string[] {
    return this.list()
      .filter((run) => run.status === 'running')
      .map((run) => {
        const written = this.#written.get(run.id);
        const what = `the page's ${run.mode} of ${shortCheckpointId(run.checkpoint)} (run ${run.id})`;
        const location = shellWord(displayPath(written?.location ?? this.#options.location, cwd));
        // The branch, inputs, outputs and answer of the page's form are said again: they are saved nowhere.
        const startOver = startOverCommand({
          command,
          mode: run.mode,
          from: shortCheckpointId(run.checkpoint),
          location: displayPath(this.#options.location, cwd),
          flags: this.#startedWith.get(run.id) ?? {},
        });
        return written === undefined
          ? `crewline: stopping the server interrupted ${what} before it wrote a checkpoint; start over with: ${startOver}`
          : `crewline: stopping the server interrupted ${what}; the run stopped after checkpoint ${shortCheckpointId(written.id)} on branch ${written.branch}; continue it with: ${command} checkpoint resume ${shortCheckpointId(written.id)} --location ${location}`;
      });
  }

  /**
   * Checks the request against the checkpoint, starts the run, and returns its record at once.
   * Refused (`conflict`) while an identical request is being checked or runs, and while
   * `maxConcurrentRuns` run.
   */
  async start(request: RunRequest): Promise<RunRecord> {
    const key = requestKey(request);
    this.#reserve(key, request);
    let started: { record: RunRecord; running: Promise<unknown> };
    try {
      started = await this.#begin(request);
    } catch (error) {
      this.#release(key);
      throw error;
    }
    this.#active.set(key, started.record);
    const ended = () => {
      this.#release(key);
      this.#forgetEnded();
    };
    started.running.then(ended, ended);
    return started.record;
  }

  /** Takes the request's place among the active ones, synchronously: two requests never both pass. */
  #reserve(key: string, request: RunRequest): void {
    const same = this.#active.get(key);
    if (this.#active.has(key)) {
      throw cliError(
        'conflict',
        `checkpoint serve: an identical ${request.mode} of ${request.checkpoint} is already ${same ? `running (run ${same.id})` : 'starting'}; wait for it to end, or change the branch, inputs or outputs`,
      );
    }
    const branch = request.mode === 'fork' ? request.branch : undefined;
    if (branch !== undefined && [...this.#forkBranches.values()].includes(branch)) {
      throw cliError(
        'conflict',
        `checkpoint serve: a fork onto branch ${JSON.stringify(branch)} is already starting or running from this page; wait for it to end, or choose another branch name in the form (or leave it empty to generate one)`,
      );
    }
    const limit = this.#options.maxConcurrentRuns ?? 3;
    if (this.#active.size >= limit) {
      throw cliError(
        'conflict',
        `checkpoint serve: ${this.#active.size} runs started from this page are running, the most it runs at once (maxConcurrentRuns ${limit}); wait for one to end`,
      );
    }
    this.#active.set(key, undefined);
    if (branch !== undefined) this.#forkBranches.set(key, branch);
  }

  /** Frees the place {@link ExplorerRuns.#reserve} took: the request ended or was refused. */
  #release(key: string): void {
    this.#active.delete(key);
    this.#forkBranches.delete(key);
  }

  /** Drops the oldest ended records past `maxFinishedRuns` (a Map keeps insertion order). */
  #forgetEnded(): void {
    const ended = [...this.#runs.values()].filter((run) => run.status !== 'running');
    const excess = ended.length - (this.#options.maxFinishedRuns ?? 50);
    for (const run of ended.slice(0, Math.max(0, excess))) this.#runs.delete(run.id);
  }

  /**
   * Whether a resume continues the checkpoint as the latest of its run: a continuation of the run by
   * another process found as it starts is then refused (conflict), not paid for again on a new
   * branch, as the resume of a checkpoint its run had gone past is. Judged by what the page planned
   * against (`head`) when it says, and refused at once when the run went on since; else by the
   * store now (a request that says nothing of the page).
   */
  async #readAsLatest(request: RunRequest, metadata: CheckpointMetadata): Promise<boolean> {
    const newerHead = await newerHeadId(this.#options.provider, this.#options.location, metadata);
    if (request.head === undefined) return newerHead === undefined;
    const headNow = newerHead ?? metadata.id;
    if (request.head === headNow) return request.head === metadata.id;
    if (request.head === metadata.id)
      throw cliError(
        'conflict',
        `checkpoint serve: ${continuedSinceReadMessage(metadata.id, headNow, pageAdvice(metadata.id, headNow))}`,
      );
    throw cliError(
      'conflict',
      `checkpoint serve: the run of checkpoint ${metadata.id} went on since the page planned this resume (its latest was ${request.head} then, and is now ${headNow}); nothing was run, as the plan shown no longer holds. Open ${metadata.id} again to see the plan as it is now, or open ${headNow} and resume it to continue from where the run got`,
    );
  }

  /** The checks that answer the form at once, then the run: its record, and the run until it ends. */
  async #begin(request: RunRequest): Promise<{ record: RunRecord; running: Promise<unknown> }> {
    const reference = await this.#options.reference(request.checkpoint);
    const document = await readDocument(this.#options.provider, this.#options.location, request.checkpoint);
    const view = viewDocument(document);
    const inputs = continuedInputs(view, parseAssignments('--input', request.inputs));
    const taskOutputs = parseTaskOutputs(request.outputs, view);
    refuseAnswerNotAwaited(request.answer, view);
    // The runtime's own check, here too, so that the form is answered at once (400) instead of
    // starting a run that fails: an unknown input, or nothing that would run.
    checkBeforeRunning(
      document,
      {
        mode: request.mode,
        ...(inputs ? { inputs } : {}),
        ...(taskOutputs ? { taskOutputs } : {}),
      },
      runAgainWordsOfPage,
    );
    await refuseTakenBranch(
      {
        provider: this.#options.provider,
        location: this.#options.location,
        branch: request.branch,
        cwd: this.#options.cwd,
      },
      'choose another branch name in the form or leave it empty to generate one',
    );
    const readAsLatest = request.mode === 'resume' && (await this.#readAsLatest(request, document.metadata));
    const record: RunRecord = {
      id: randomUUID(),
      checkpoint: request.checkpoint,
      mode: request.mode,
      status: 'running',
      lines: [],
      ...(request.branch !== undefined ? { branch: request.branch } : {}),
    };
    this.#runs.set(record.id, record);
    this.#startedWith.set(record.id, {
      ...(request.branch !== undefined ? { branch: request.branch } : {}),
      ...(request.inputs !== undefined ? { inputs: request.inputs } : {}),
      ...(request.outputs !== undefined ? { outputs: request.outputs } : {}),
      ...(request.answer !== undefined ? { answer: request.answer } : {}),
    });
    const { onUpdate } = this.#options;
    const addLine = (line: string) => {
      record.lines.push(line);
      onUpdate('progress', { run: record.id, line });
    };
    const running = this.#warnings
      .capture(addLine, () =>
        continueRun({
          reference,
          tasks: view.tasks,
          mode: request.mode,
          cwd: this.#options.cwd,
          providers: this.#options.providers,
          ...(request.branch !== undefined ? { branch: request.branch } : {}),
          ...(inputs ? { inputs } : {}),
          ...(taskOutputs ? { taskOutputs } : {}),
          ...(request.answer !== undefined ? { humanInput: request.answer } : {}),
          ...(readAsLatest ? { readAsLatest } : {}),
          onLine: addLine,
          onCheckpoint: (written) => this.#written.set(record.id, written),
        }),
      )
      .then(
        (outcome) => {
          this.#written.delete(record.id);
          this.#startedWith.delete(record.id);
          record.status = outcome.pause ? 'paused' : 'finished';
          record.branch = outcome.branch;
          record.output = outcome.output;
          if (outcome.pause)
            record.pause = { method: outcome.pause.methodName, message: outcome.pause.message };
          if (outcome.lastCheckpoint !== undefined) record.lastCheckpoint = outcome.lastCheckpoint;
          onUpdate('run', record);
        },
        async (failure: unknown) => {
          this.#written.delete(record.id);
          this.#startedWith.delete(record.id);
          const { redactSecretsInText } = await import('@crewline/events');
          // A lineage another process continues, or continued since the checkpoint was read as its
          // latest: the library advises its `onConflict` option (and `restoreFrom`, `fork()`), which
          // this page offers as its form's choices (the error keeps its code, `conflict`).
          const error =
            leaseHeld(failure, leaseWordsOfPage(request.checkpoint)) ??
            continuedSinceReadInWords(failure, pageAdvice) ??
            nothingToRunInWords(failure, runAgainWordsOfPage) ??
            failure;
          record.status = 'failed';
          record.error = redactSecretsInText(error instanceof Error ? error.message : String(error));
          onUpdate('run', record);
        },
      );
    onUpdate('run', record);
    return { record, running };
  }
}
