// The call log a crash-trial child keeps: one JSON line per model request and per checkpoint write,
// appended with a synchronous write(2) before the request goes out (or the write starts), and one
// per model answer, appended the moment the answer is received, before the runtime sees it: from
// then on the user has paid for the call, whatever the process does next. Once
// write(2) returns, the bytes belong to the kernel and survive a SIGKILL of the process (an fsync
// only matters for a machine crash, which these trials do not simulate), so after a kill the log
// names every request the process made. Lines are small, so a kill cannot tear one in practice; a
// torn last line is ignored all the same (a request it names had not been sent; an answer it names
// is then not counted as arrived, which could only hide one call paid twice).
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/** One model request: which conversation it belongs to and how far that conversation was. */
export interface RequestEntry {
  kind: 'request';
  /** SHA-256 of the request's prompt as JSON: the offline model is deterministic, so same key = same call. */
  key: string;
  /**
   * The conversation this request continues: `<agent role>#<task index>` from the `llm_call_started`
   * event (each pair names one task in the crash scenarios); empty outside a task.
   */
  conversation: string;
  /** Assistant messages already in the prompt: the request's position in its conversation. */
  turn: number;
  /** Milliseconds since the process started (`performance.now()`). */
  at: number;
}

/**
 * A model answer arrived: the request with this key was answered (and paid for). Written before the
 * runtime handles the answer, so a kill right after it still leaves the line.
 */
export interface CompletionEntry {
  kind: 'completion';
  /** The key of the request answered (see {@link RequestEntry.key}). */
  key: string;
  conversation: string;
  turn: number;
  at: number;
}

/** A checkpoint write began (`checkpoint_started`) or finished (`checkpoint_completed`/`_failed`). */
export interface WriteEntry {
  kind: 'write-started' | 'write-finished';
  /** Milliseconds since the process started (`performance.now()`). */
  at: number;
}

/**
 * The resume found the run's lineage still held by the interrupted process (a SIGKILLed run stops
 * renewing its lease but does not release it) and waited `waitedMs` for the lease to run out.
 */
export interface LeaseWaitEntry {
  kind: 'lease-wait';
  waitedMs: number;
  at: number;
}

export type CallLogEntry = RequestEntry | CompletionEntry | WriteEntry | LeaseWaitEntry;

/** The conversation of a task: its agent's role and its index in its crew. */
export function conversationKey(agentRole: unknown, taskIndex: unknown): string {
  return typeof agentRole === 'string' && typeof taskIndex === 'number' ? `${agentRole}#${taskIndex}` : '';
}

/** The key of a request: a digest of its prompt. */
export function requestKey(prompt: unknown): string {
  return createHash('sha256').update(JSON.stringify(prompt)).digest('hex');
}

/** Assistant messages in a prompt (AI SDK provider prompt: a list of `{ role, content }`). */
export function assistantTurns(prompt: readonly { role: string }[]): number {
  return prompt.filter((message) => message.role === 'assistant').length;
}

/** Opens a call log for appending; every `append` is one synchronous write. */
export function openCallLog(path: string): { append(entry: CallLogEntry): void; close(): void } {
  const descriptor = openSync(path, 'a');
  return {
    append: (entry) => void writeSync(descriptor, `${JSON.stringify(entry)}\n`),
    close: () => closeSync(descriptor),
  };
}

/** Every whole entry of a call log (none when the file does not exist). */
export function readCallLog(path: string): CallLogEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const entries: CallLogEntry[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      entries.push(JSON.parse(line) as CallLogEntry);
    } catch {
      // A line torn by the kill: its request was never sent.
    }
  }
  return entries;
}

/** The requests of a call log, in order. */
export function requestsOf(entries: readonly CallLogEntry[]): RequestEntry[] {
  return entries.filter((entry): entry is RequestEntry => entry.kind === 'request');
}

/** Keys of the requests whose answer the process received. */
export function completedKeysOf(entries: readonly CallLogEntry[]): Set<string> {
  return new Set(
    entries
      .filter((entry): entry is CompletionEntry => entry.kind === 'completion')
      .map((entry) => entry.key),
  );
}

/**
 * Checkpoint writes that began and that finished after the answer to request `key` arrived: tells a
 * kill before any write could hold the answer from one that lost a write already under way.
 */
export function writesAfterAnswer(
  entries: readonly CallLogEntry[],
  key: string,
): { started: number; finished: number } {
  const arrival = entries.findIndex((entry) => entry.kind === 'completion' && entry.key === key);
  const after = arrival === -1 ? [] : entries.slice(arrival + 1);
  return {
    started: after.filter((entry) => entry.kind === 'write-started').length,
    finished: after.filter((entry) => entry.kind === 'write-finished').length,
  };
}

/** Milliseconds a resuming process waited for leases to run out. */
export function leaseWaitOf(entries: readonly CallLogEntry[]): number {
  return entries.reduce((total, entry) => total + (entry.kind === 'lease-wait' ? entry.waitedMs : 0), 0);
}

/** True when the log ends inside a checkpoint write: the process was killed while writing. */
export function endsInsideWrite(entries: readonly CallLogEntry[]): boolean {
  for (let index = entries.length - 1; index >= 0; index -= 1) {
    const kind = entries[index]!.kind;
    if (kind === 'write-started') return true;
    if (kind === 'write-finished') return false;
  }
  return false;
}
