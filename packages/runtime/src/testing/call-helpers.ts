import type { OfflineModel, OfflineModelCall } from '../models/offline/offline-model.js';

/** Something that records its calls: an offline model, or its `calls` array. */
export type CallRecorder = Pick<OfflineModel, 'calls'> | readonly OfflineModelCall[];

function callsOf(source: CallRecorder): readonly OfflineModelCall[] {
  return Array.isArray(source) ? source : (source as Pick<OfflineModel, 'calls'>).calls;
}

/**
 * A text a call matches: a substring of its system prompt or of any message text, or a predicate.
 */
export type CallMatcher = string | RegExp | ((call: OfflineModelCall) => boolean);

function matches(call: OfflineModelCall, matcher: CallMatcher): boolean {
  if (typeof matcher === 'function') return matcher(call);
  const haystack = `${call.system ?? ''}\n${JSON.stringify(call.messages)}`;
  return typeof matcher === 'string' ? haystack.includes(matcher) : matcher.test(haystack);
}

/** How many recorded calls match (all of them without a matcher). */
export function countCalls(source: CallRecorder, matcher?: CallMatcher): number {
  return findCalls(source, matcher).length;
}

/** The recorded calls that match, in order. */
export function findCalls(source: CallRecorder, matcher?: CallMatcher): OfflineModelCall[] {
  return callsOf(source).filter((call) => matcher === undefined || matches(call, matcher));
}

/** The most recent call, or `undefined` when the model was never called. */
export function lastCall(source: CallRecorder): OfflineModelCall | undefined {
  const calls = callsOf(source);
  return calls[calls.length - 1];
}

/** Names of the tools whose calls the model received results for in a call's prompt, in order. */
export function toolResultsSeen(call: OfflineModelCall): string[] {
  const names: string[] = [];
  for (const message of call.messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-result') names.push(part.toolName);
  }
  return names;
}
