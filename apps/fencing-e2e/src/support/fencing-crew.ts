import { appendFileSync } from 'node:fs';
import type { Crew, CrewOptions } from '@crewline/runtime';
import { type OfflineModel, type OfflineModelCall, offlineModel } from '@crewline/runtime/testing';
import { fourTaskCrew, type LoggedCall, taskOf } from '@crewline/test-support/four-task-crew';

export { taskDescriptions } from '@crewline/test-support/four-task-crew';

/** The id the crew's model is registered under: checkpoints store it, every process registers it. */
export const MODEL_ID = 'fencing:offline';

export const inputs = { topic: 'tide tables' };

export interface FencingModelOptions {
  /** File every call is appended to, synchronously, when it starts (it is paid once it starts). */
  callLog: string;
  /** Simulated latency of a call on `task`. Default 0. */
  latencyMs?: (task: number) => number;
  /** Calls on this task fail (the run stops there). */
  failTask?: number;
  /** Told of each call as it starts (before its latency). */
  onCall?: (task: number) => void;
}

/**
 * The offline model every process of the trials uses: each call is logged before it is answered, in
 * one file shared by all processes, so a test can count what was paid for, per task, across processes
 * (a process killed mid-call has logged it already).
 */
export function fencingModel(options: FencingModelOptions): OfflineModel {
  const failed = (call: OfflineModelCall) =>
    options.failTask !== undefined && taskOf(call, inputs.topic) === options.failTask;
  return offlineModel({
    name: 'fencing',
    latencyMs: (call) => {
      const task = taskOf(call, inputs.topic);
      const entry: LoggedCall = { pid: process.pid, task, failed: failed(call) };
      appendFileSync(options.callLog, `${JSON.stringify(entry)}\n`);
      options.onCall?.(task);
      return options.latencyMs?.(task) ?? 0;
    },
    failOn: (call) => (failed(call) ? 'made to fail by the fencing trial' : false),
  });
}

/** Two agents, four tasks; the same definition in every process (a resumed crew is built in code). */
export function fencingCrew(model: OfflineModel, checkpoint?: CrewOptions['checkpoint']): Crew {
  return fourTaskCrew({ name: 'fencing-crew', model, checkpoint });
}
