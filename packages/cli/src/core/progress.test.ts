import {
  LLMCallCompletedEvent,
  redactSecretsInText,
  registerSecretValue,
  TaskCompletedEvent,
  TaskStartedEvent,
} from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { type ProgressEvent, progressLine } from './progress.js';

/** A line as the CLI builds it, with no redaction to apply (these events hold no secret). */
const lineOf = (event: ProgressEvent, width?: number) =>
  progressLine(event, width, undefined, (text) => text);

const asProgress = (event: { toJSON(): unknown }) => event.toJSON() as ProgressEvent;

describe('progressLine', () => {
  it('describes task, model and checkpoint events in one short line', () => {
    const started = new TaskStartedEvent({
      description: 'Write the report',
      context: { taskIndex: 1, agentRole: 'Writer' },
    });
    expect(lineOf(asProgress(started))).toMatch(
      /^\d\d:\d\d:\d\d task 2 Write the report started \(Writer\)$/,
    );
    const completed = new TaskCompletedEvent({
      description: 'Write',
      output: 'line one\nline two',
      context: { taskIndex: 1 },
    });
    expect(lineOf(asProgress(completed))).toMatch(/task 2 Write completed: line one line two$/);
    const call = new LLMCallCompletedEvent({
      model: 'offline:test',
      callId: 'c',
      response: 'x',
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } as never,
    });
    expect(lineOf(asProgress(call))).toContain('model offline:test answered (3 tokens)');
    expect(lineOf({ type: 'checkpoint_completed', checkpointId: 'abc', trigger: 'task_completed' })).toBe(
      '  checkpoint abc written (task_completed)',
    );
  });

  it('skips events too small to show and bounds the width', () => {
    expect(lineOf({ type: 'llm_stream_chunk' })).toBeUndefined();
    const long = lineOf({ type: 'task_completed', output: 'x'.repeat(500) }, 60)!;
    expect(long.length).toBe(60);
  });

  it('says a crew without a name once: "crew completed", not "crew crew completed"', () => {
    // The runtime names a crew without a name "crew" (trial s8, finding 5).
    expect(lineOf({ type: 'crew_kickoff_started', crewName: 'crew' })).toBe('crew started');
    expect(lineOf({ type: 'crew_kickoff_completed', crewName: 'crew' })).toBe('crew completed');
    expect(lineOf({ type: 'crew_kickoff_failed', crewName: 'crew', error: 'no model' })).toBe(
      'crew failed: no model',
    );
    expect(lineOf({ type: 'crew_kickoff_completed', crewName: 'Research' })).toBe('crew Research completed');
  });
});

describe('a progress line holding a secret', () => {
  // The task name was cut to 50 characters before the line was redacted: a key the cut split was
  // no longer recognized, and its first characters were printed.
  it('is redacted before a part of it is cut, so no piece of the secret is printed', () => {
    const secret = 'wx-7Hq2Lm9Pz4Rt8Kd1-progress';
    registerSecretValue(secret, 'progress test');
    const event = {
      type: 'task_started',
      context: { taskIndex: 1, taskName: `Call the weather service with the key ${secret} please` },
    };
    const line = redactSecretsInText(progressLine(event, 200, undefined, redactSecretsInText)!);
    expect(line).not.toContain(secret.slice(0, 6));
  });
});
