// A child process of the fencing trials, run as a user's program would run (compiled by
// support/bundle-child.ts). Usage: node fencing-child.mjs <mode> <options as JSON>
//   resume  continue a checkpoint (`kickoff({ fromCheckpoint })`) of the fencing crew; with `barrier`,
//           print "ready" once loaded and wait for "go" on stdin, so that many processes claim at once
//   write   run a crew of `tasks` tasks checkpointing every event into a fresh lineage
// Each model call is appended to the call log and printed as "call <task>" when it starts; the last
// line is "result <JSON>": what the run ended with, or the typed error that refused it (exit code 3).
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { CheckpointCompletedEvent, CheckpointFailedEvent, CrewlineError, eventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { PostgresProvider } from '@crewline/provider-postgres';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { fencingCrew, fencingModel, inputs, MODEL_ID } from '../support/fencing-crew.js';

export type ProviderKind = 'json' | 'sqlite' | 'postgres';

export interface ResumeOptions {
  kind: ProviderKind;
  /** A checkpoint reference, or a location (its latest). */
  reference: string;
  callLog: string;
  /** Latency of a model call, per task (missing: 0). */
  latencyMs?: number[];
  leaseTtlMs?: number;
  onConflict?: 'error' | 'fork';
  barrier?: boolean;
}

export interface WriteOptions {
  location: string;
  tasks: number;
  callLog: string;
  leaseTtlMs: number;
}

/** The last line of a child. */
export type ChildResult =
  | { status: 'finished'; output: string; written: string[]; failed: string[]; slowestWriteMs: number }
  | { status: 'refused'; code: string; message: string; details: Record<string, unknown> | undefined };

function print(line: string): void {
  // Synchronous: a line printed before a SIGKILL is never lost.
  writeSync(1, `${line}\n`);
}

function providerOf(kind: ProviderKind): CheckpointProvider {
  if (kind === 'json') return new JsonProvider();
  if (kind === 'sqlite') return new SqliteProvider();
  return new PostgresProvider({ poolSize: 2 });
}

function waitForStart(): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() !== 'go') return;
      lines.close();
      // An open stdin would keep this process alive after its run.
      process.stdin.destroy();
      resolve();
    });
  });
}

/**
 * The ids of the checkpoints this process wrote, the errors of those it failed to write, and how long
 * the slowest write took (from the event to the store's answer).
 */
function watchCheckpoints(): { written: string[]; failed: string[]; slowestWriteMs: number } {
  const watched = { written: [] as string[], failed: [] as string[], slowestWriteMs: 0 };
  eventBus.onAny((_source: unknown, event: unknown) => {
    if (event instanceof CheckpointCompletedEvent) {
      watched.written.push(event.checkpointId);
      watched.slowestWriteMs = Math.max(watched.slowestWriteMs, Math.round(event.durationMs));
    }
    if (event instanceof CheckpointFailedEvent) watched.failed.push(event.error);
  });
  return watched;
}

async function resume(options: ResumeOptions): Promise<ChildResult> {
  const model = fencingModel({
    callLog: options.callLog,
    latencyMs: (task) => options.latencyMs?.[task] ?? 0,
    onCall: (task) => print(`call ${task}`),
  });
  registerProject({ models: { [MODEL_ID]: model } });
  const provider = providerOf(options.kind);
  const checkpoints = watchCheckpoints();
  if (options.barrier) {
    print('ready');
    await waitForStart();
  }
  try {
    const output = await fencingCrew(model).kickoff({
      fromCheckpoint: {
        restoreFrom: options.reference,
        provider,
        ...(options.leaseTtlMs !== undefined ? { leaseTtlMs: options.leaseTtlMs } : {}),
        ...(options.onConflict !== undefined ? { onConflict: options.onConflict } : {}),
      },
    });
    return { status: 'finished', output: output.raw, ...checkpoints };
  } finally {
    await provider.close?.();
  }
}

async function write(options: WriteOptions): Promise<ChildResult> {
  // A model call that takes no time at all never gives the event loop a turn: the whole run would be
  // one chain of promises, with no lease renewal (a timer) and no finished write (a socket) until it
  // ends, like a stalled process. 1 ms is still far quicker than any real model.
  const model = fencingModel({ callLog: options.callLog, latencyMs: () => 1 });
  const agent = new Agent({ role: 'Clerk', goal: 'Note {topic}', backstory: 'Quick', llm: model });
  const provider = new PostgresProvider({ poolSize: 2 });
  const crew = new Crew({
    name: 'many-writers',
    agents: [agent],
    tasks: Array.from(
      { length: options.tasks },
      (_, index) =>
        new Task({ description: `Note ${index + 1} on {topic}`, expectedOutput: 'One line', agent }),
    ),
    checkpoint: { location: options.location, provider, onEvents: ['*'], leaseTtlMs: options.leaseTtlMs },
  });
  const checkpoints = watchCheckpoints();
  try {
    const output = await crew.kickoff({ inputs });
    return { status: 'finished', output: output.raw, ...checkpoints };
  } finally {
    await provider.close();
  }
}

const [mode, json] = process.argv.slice(2);
try {
  const options = JSON.parse(json ?? '{}');
  const result =
    mode === 'resume'
      ? await resume(options as ResumeOptions)
      : mode === 'write'
        ? await write(options as WriteOptions)
        : undefined;
  if (result === undefined) throw new Error(`unknown mode ${mode}`);
  print(`result ${JSON.stringify(result)}`);
} catch (error) {
  if (!CrewlineError.hasCode(error, 'conflict')) throw error;
  const refused: ChildResult = {
    status: 'refused',
    code: error.code,
    message: error.message,
    details: error.details as Record<string, unknown> | undefined,
  };
  print(`result ${JSON.stringify(refused)}`);
  process.exitCode = 3;
}
