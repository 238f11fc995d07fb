import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import { PostgresProvider } from '@crewline/provider-postgres';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { registerProject } from '@crewline/runtime';
import type { CheckpointProvider, StoredCheckpoint } from '@crewline/runtime-state';
import type { LoggedCall } from '@crewline/test-support/four-task-crew';
import {
  dropLocation,
  serverPassword,
  temporaryLocation,
  testServerUrl,
} from '@crewline/test-support/postgres';
import type { ProviderKind } from '../children/fencing-child.js';
import { fencingCrew, fencingModel, inputs, MODEL_ID } from './fencing-crew.js';

/** One location of one provider for one trial, with what its child processes need to reach it. */
export interface TrialStore {
  kind: ProviderKind;
  provider: CheckpointProvider;
  /** The canonical location (for Postgres: without the password). */
  location: string;
  /** The environment of a child process (for Postgres: PGPASSWORD). */
  environment: NodeJS.ProcessEnv;
  /** The file every model call of the trial is logged to. */
  callLog: string;
  directory: string;
  dispose(): Promise<void>;
}

/** A fresh location of `kind` and a call log, in a temporary directory (and schema, for Postgres). */
export function trialStore(kind: ProviderKind): TrialStore {
  const directory = mkdtempSync(join(tmpdir(), `crewline-fencing-${kind}-`));
  const given =
    kind === 'json'
      ? join(directory, '.checkpoints')
      : kind === 'sqlite'
        ? join(directory, 'checkpoints.db')
        : temporaryLocation();
  const provider: CheckpointProvider =
    kind === 'json'
      ? new JsonProvider()
      : kind === 'sqlite'
        ? new SqliteProvider()
        : new PostgresProvider({ poolSize: 2 });
  return {
    kind,
    provider,
    location: provider.resolveLocation(given),
    environment: kind === 'postgres' ? { PGPASSWORD: serverPassword(testServerUrl()!) } : {},
    callLog: join(directory, 'calls.log'),
    directory,
    async dispose() {
      await provider.close?.();
      if (kind === 'postgres') await dropLocation(given);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Runs the fencing crew in this process until its second task, whose model call fails: the run
 * stops after its first task, with a checkpoint on every event. Returns the run's checkpoints.
 */
export async function runFirstTask(store: TrialStore): Promise<StoredCheckpoint[]> {
  const model = fencingModel({ callLog: store.callLog, failTask: 1 });
  registerProject({ models: { [MODEL_ID]: model } });
  const crew = fencingCrew(model, { location: store.location, provider: store.provider, onEvents: ['*'] });
  await crew.kickoff({ inputs }).then(
    () => {
      throw new Error('the first run was meant to fail on its second task');
    },
    () => undefined,
  );
  return store.provider.list(store.location);
}

/** The model calls the trial's processes made (failed ones marked). */
export function loggedCalls(store: TrialStore): LoggedCall[] {
  return readFileSync(store.callLog, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LoggedCall);
}

/** How many calls that were answered (paid for) each task got, across every process. */
export function paidCallsPerTask(calls: readonly LoggedCall[], tasks: number): number[] {
  const counts = new Array<number>(tasks).fill(0);
  for (const call of calls) if (!call.failed && call.task >= 0) counts[call.task]! += 1;
  return counts;
}

/** The checkpoints of a lineage that no checkpoint continues: its heads (one, when fenced). */
export function headsOf(checkpoints: readonly StoredCheckpoint[], lineageId: string): StoredCheckpoint[] {
  const ofLineage = checkpoints.filter((checkpoint) => checkpoint.lineageId === lineageId);
  const parents = new Set(ofLineage.map((checkpoint) => checkpoint.parentId));
  return ofLineage.filter((checkpoint) => !parents.has(checkpoint.id));
}
