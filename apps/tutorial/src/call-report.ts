import { renameSync, writeFileSync } from 'node:fs';
import { eventBus, LLMCallCompletedEvent } from '@crewline/events';
import type { OfflineModel, OfflineModelCall } from '@crewline/runtime/testing';

/** One model request as the call report shows it. */
export interface ReportedCall {
  /** 1-based number of the request in this process. */
  index: number;
  /** The agent that asked, read from the system prompt ("You are <role>."). */
  agentRole: string | undefined;
  /** The task line of the request ("Current task: ..."). */
  task: string | undefined;
  /** The whole last user message: the task, its expected output and the context from earlier tasks. */
  userText: string;
}

/** What the tutorial writes to CREWLINE_TUTORIAL_CALLS_FILE: every request the offline model received. */
export interface CallReport {
  model: string;
  count: number;
  calls: ReportedCall[];
}

/** The report of a model's calls so far. */
export function callReport(model: Pick<OfflineModel, 'calls' | 'modelId'>): CallReport {
  return {
    model: `offline:${model.modelId}`,
    count: model.calls.length,
    calls: model.calls.map(reportedCall),
  };
}

function reportedCall(call: OfflineModelCall): ReportedCall {
  return {
    index: call.index,
    agentRole: /^You are (.+?)\./m.exec(call.system ?? '')?.[1],
    task: /^Current task: (.+)$/m.exec(call.userText)?.[1],
    userText: call.userText,
  };
}

/** Writes the report so a reader never sees half a file (temp file, then rename). */
export function writeCallReport(model: Pick<OfflineModel, 'calls' | 'modelId'>, file: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(callReport(model), null, 2)}\n`);
  renameSync(temporary, file);
}

/**
 * Test mode: keeps `file` up to date with the model's calls. It is rewritten after every completed
 * model call (an interrupted process has no chance to write it at the end) and when the process
 * exits normally (so a process that made no call still leaves a report saying so).
 */
export function startCallReport(model: OfflineModel, file: string): void {
  const write = () => writeCallReport(model, file);
  write();
  eventBus.on(LLMCallCompletedEvent, write);
  process.on('exit', write);
}
