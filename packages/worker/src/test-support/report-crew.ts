import { appendFileSync } from 'node:fs';
import { type Crew, registerProject } from '@crewline/runtime';
import { type OfflineModelCall, offlineModel } from '@crewline/runtime/testing';
import { fourTaskCrew, type LoggedCall, taskOf } from '@crewline/test-support/four-task-crew';
import type { RunContext } from '../run-registry.js';

export { type LoggedCall, taskDescriptions } from '@crewline/test-support/four-task-crew';

export interface ReportCrewOptions {
  /** File every call is appended to, synchronously, when it starts. Default: none. */
  callLog?: string;
  /** Simulated latency of each call. Default `0`. */
  latencyMs?: number;
  /** Makes a call fail: `(task, attempt)` → true. Default: never. */
  failWhen?: (task: number, attempt: number) => boolean;
  /** Told of each call as it starts. */
  onCall?: (runId: string, task: number) => void;
}

/**
 * A factory of the four-task report crew: one offline model per run, registered under an id of its
 * own (checkpoints store it; a resumed attempt finds the same model again in this process).
 */
export function reportCrewFactory(options: ReportCrewOptions = {}) {
  return (context: RunContext): Crew => {
    const topic = String(context.inputs.topic ?? '');
    if (topic === '') {
      throw Object.assign(new Error('inputs.topic is required'), { name: 'BadInput' });
    }
    const failed = (call: OfflineModelCall) =>
      options.failWhen?.(taskOf(call, topic), context.attempt) ?? false;
    const model = offlineModel({
      name: 'report',
      latencyMs: (call) => {
        const task = taskOf(call, topic);
        if (options.callLog !== undefined) {
          const entry: LoggedCall = { pid: process.pid, runId: context.runId, task, failed: failed(call) };
          appendFileSync(options.callLog, `${JSON.stringify(entry)}\n`);
        }
        options.onCall?.(context.runId, task);
        return options.latencyMs ?? 0;
      },
      failOn: (call) => (failed(call) ? 'made to fail by the test' : false),
    });
    registerProject({ models: { [`report:${context.runId}`]: model } });
    return fourTaskCrew({ name: 'report-crew', model });
  };
}

/** The output of an uninterrupted run of the report crew on `topic`, without any checkpoint. */
export async function uninterruptedOutput(topic: string): Promise<string> {
  const crew = reportCrewFactory()({
    runId: `reference-${topic.replaceAll(/\W/g, '-')}`,
    inputs: { topic },
    attempt: 1,
  });
  return (await crew.kickoff({ inputs: { topic } })).raw;
}
