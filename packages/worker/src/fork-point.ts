import { findRerunCheckpoint } from '@crewline/runtime/internal';
import { type CheckpointDocument, type CheckpointProvider, readDocument } from '@crewline/runtime-state';
import {
  editTaskOutputsInDocument,
  findUnknownInput,
  nothingLeftToRun,
  parseCrewData,
  parseFlowData,
  type TaskStatus,
} from '@crewline/runtime-state/internal';
import { workerError } from './errors.js';
import { warnAboutRestarts } from './interrupted-tasks.js';
import { lineageOrder } from './lineage-order.js';

/** What `queue.fork` asks of the finished run's checkpoints (see `ForkRunOptions`). */
export interface ForkRequest {
  inputs?: Record<string, unknown> | undefined;
  taskOutputs?: Readonly<Record<string, string>> | undefined;
  rerunFrom?: string | undefined;
}

/** The finished run a fork branches off: its id, its last checkpoint, its lineage. */
export interface ForkSource {
  runId: string;
  /** The run's last checkpoint reference (`postgres-url#id`). */
  lastCheckpoint: string;
  lineageId: string | null;
}

/**
 * The run's newest checkpoint: the last of its lineage in the store. Its row's last checkpoint is
 * what the last renewal or the end of an attempt wrote, which a cancel mid-task leaves behind (often
 * the run's first checkpoint); branching off it paid again for the tasks completed after it.
 */
async function newestOfRun(
  provider: CheckpointProvider,
  location: string,
  source: ForkSource,
): Promise<string> {
  if (source.lineageId === null) return source.lastCheckpoint;
  const newest = lineageOrder(await provider.list(location, { lineageId: source.lineageId })).at(-1);
  return newest?.reference ?? source.lastCheckpoint;
}

/**
 * Checks a fork against the finished run's checkpoints before anything is queued — a bad task number
 * or an unknown input is refused here, in the caller's process, instead of failing the new run in a
 * worker later — and returns the reference of the checkpoint the fork branches off: the run's last
 * one, or for a flow with `rerunFrom` the one saved before that method first completed.
 */
export async function findForkPoint(
  provider: CheckpointProvider,
  location: string,
  source: ForkSource,
  request: ForkRequest,
): Promise<string> {
  source = { ...source, lastCheckpoint: await newestOfRun(provider, location, source) };
  const id = provider.parseReference(source.lastCheckpoint)?.id;
  if (id === undefined) {
    throw workerError(
      'corrupt_checkpoint',
      `fork("${source.runId}"): the run's last checkpoint ${source.lastCheckpoint} names no checkpoint id; enqueue the run again instead`,
    );
  }
  const document = await readDocument(provider, location, id);
  const flow = document.entities.find((entity) => entity.kind === 'flow');
  checkInputs(source, document, request.inputs);
  if (flow === undefined) {
    if (request.rerunFrom !== undefined) {
      throw workerError(
        'invalid_argument',
        `fork("${source.runId}"): rerunFrom is for runs of a flow and this run is a crew's; replace the output of the task before the first one to re-run with taskOutputs (--set-output) instead`,
      );
    }
    checkTaskOutputs(source, document, request.taskOutputs);
    checkSomethingRuns(source, document, request.taskOutputs);
    warnAboutRestarts(source.runId, document, request.inputs);
    return source.lastCheckpoint;
  }
  if (request.taskOutputs !== undefined && Object.keys(request.taskOutputs).length > 0) {
    // The method that ran a flow's crew is completed at the fork point, so an edited task of that
    // crew would be stored and never acted on; re-running the method is what runs the crew again.
    throw workerError(
      'invalid_argument',
      `fork("${source.runId}"): taskOutputs (--set-output) are for runs of a crew and this run is flow "${flow.name}"'s; re-run its methods from one of them with rerunFrom (--rerun-from METHOD) and changed inputs instead`,
    );
  }
  if (request.rerunFrom === undefined) {
    // A completed flow restored at its last checkpoint runs no method: the fork would end at once
    // with the old output and write nothing, its changed inputs never reaching a method.
    const reason = nothingLeftToRun(document);
    if (reason !== undefined) {
      throw workerError(
        'invalid_argument',
        `fork("${source.runId}"): nothing to run: ${reason} and no method would run again; re-run its methods from one of them with rerunFrom (--rerun-from METHOD), or enqueue a new run for new inputs`,
      );
    }
    return source.lastCheckpoint;
  }
  const completed = parseFlowData(flow).execution.completedMethods;
  if (!completed.includes(request.rerunFrom)) {
    throw workerError(
      'invalid_argument',
      `fork("${source.runId}"): rerunFrom "${request.rerunFrom}" is not a method the run completed (completed: ${completed.join(', ') || 'none'}); re-run from one of those`,
    );
  }
  return rerunPoint(provider, location, source, request.rerunFrom);
}

/**
 * A task number as the CLI and `checkpoint info` show it, from 1 (`taskOutputs` key + 1, as its
 * documentation says): one numbering in every message, whichever way the fork was asked for.
 */
function taskNumber(index: number): string {
  return `task ${index + 1}`;
}

/** Edited task outputs name tasks the checkpoint holds, completed ones: the edit replaces an output. */
function checkTaskOutputs(
  source: ForkSource,
  document: CheckpointDocument,
  taskOutputs: ForkRequest['taskOutputs'],
): void {
  if (taskOutputs === undefined) return;
  const statuses: TaskStatus[] = document.entities
    .filter((entity) => entity.kind === 'crew')
    .flatMap((entity) => parseCrewData(entity).tasks.map((task) => task.status));
  const range = statuses.length === 0 ? 'none' : `numbered 1 to ${statuses.length}`;
  for (const key of Object.keys(taskOutputs)
    .map(Number)
    .sort((a, b) => a - b)) {
    const status = statuses[key];
    if (status === undefined) {
      throw workerError(
        'invalid_argument',
        `fork("${source.runId}"): ${taskNumber(key)} is out of range: the run's last checkpoint holds ${statuses.length} task(s), ${range}`,
      );
    }
    if (status !== 'completed') {
      const done = statuses.filter((each) => each === 'completed').length;
      throw workerError(
        'invalid_argument',
        `fork("${source.runId}"): ${taskNumber(key)} is ${status} at the run's last checkpoint; only a completed task's output is replaced (${done === 0 ? 'none is' : `tasks 1 to ${done} are`})`,
      );
    }
  }
}

/**
 * A fork of a crew's run must leave a task to run: changed inputs re-template only tasks that have
 * not run, so a fork of a completed run that edits no output (or only the last one) would run
 * nothing and end with the old output. The edit is applied to a copy by the function the fork's
 * attempt uses (`editTaskOutputsInDocument`); output schemas are checked when the run starts.
 */
function checkSomethingRuns(
  source: ForkSource,
  document: CheckpointDocument,
  taskOutputs: ForkRequest['taskOutputs'],
): void {
  const edited = editTaskOutputsInDocument(document, taskOutputs ?? {}, {
    structuredOutput: () => undefined,
  });
  const reason = nothingLeftToRun(edited);
  if (reason === undefined) return;
  throw workerError(
    'invalid_argument',
    `fork("${source.runId}"): nothing to run: ${reason} and no edit makes one run again (changed inputs only reach tasks that have not run); replace the output of the task before the first one to run again with taskOutputs (--set-output N=text), or enqueue a new run for new inputs`,
  );
}

/**
 * Changed inputs must be ones the run knows (`findUnknownInput`, the check of every resume and fork
 * that takes inputs): anything else is a typo that would change nothing.
 */
function checkInputs(source: ForkSource, document: CheckpointDocument, inputs: ForkRequest['inputs']): void {
  if (inputs === undefined) return;
  const unknown = findUnknownInput(document, inputs);
  if (unknown === undefined) return;
  // The known input it is probably a misspelling of: the list alone leaves the user to spot the typo.
  const near = unknown.nearest;
  throw workerError(
    'invalid_argument',
    `fork("${source.runId}"): input "${unknown.key}" is not one the run knows (known: ${unknown.known.join(', ') || 'none'}); check its spelling${near === undefined ? '' : ` (did you mean "${near}"?)`}, or enqueue a new run for new inputs`,
    // What the refusal is about, for a caller that says it in its own words (the CLI, its --input).
    {
      details: {
        runId: source.runId,
        unknownInput: unknown.key,
        known: [...unknown.known],
        ...(near === undefined ? {} : { nearest: near }),
      },
    },
  );
}

/**
 * The checkpoint of the run's lineage to branch off so that `method` and what came after it run
 * again while earlier methods are restored: the runtime's rule (`findRerunCheckpoint`, that of
 * `findRerunPoint`) kept to this run's lineage, reading its checkpoints newest first.
 */
async function rerunPoint(
  provider: CheckpointProvider,
  location: string,
  source: ForkSource,
  method: string,
): Promise<string> {
  if (source.lineageId === null) {
    // Its worker could not write the lineage to the run's row (that write is logged and not retried).
    throw workerError(
      'invalid_argument',
      `fork("${source.runId}"): the run has no recorded lineage, so its checkpoints before the last one are not known and none saved before "${method}" completed can be found; fork it without rerunFrom to continue its last checkpoint instead`,
    );
  }
  const lineage = lineageOrder(await provider.list(location, { lineageId: source.lineageId }));
  const point = await findRerunCheckpoint(
    lineage,
    async (checkpoint) => {
      const flow = (await readDocument(provider, location, checkpoint.id)).entities.find(
        (entity) => entity.kind === 'flow',
      );
      return flow !== undefined && parseFlowData(flow).execution.completedMethods.includes(method);
    },
    { oneLineage: true },
  );
  if (point !== undefined) return point.reference;
  throw workerError(
    'invalid_argument',
    `fork("${source.runId}"): "${method}" had completed before the run's first checkpoint (the run is itself a fork), so none of its checkpoints comes before it; fork the run it was forked from instead`,
  );
}
