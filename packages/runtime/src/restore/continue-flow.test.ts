import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError, EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Flow, listen, start } from '../flow/index.js';
import { CycleFlow, executions } from '../flow/test-support/scenarios.js';
import { ProjectRegistry, registerProject } from '../project-config/project-config.js';
import { captureLogs, type LogCapture } from '../testing/capture-logs.js';
import { continueFromCheckpoint } from './continue-from-checkpoint.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-continue-flow-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const olderWarning = 'is not the latest of its run';
let logs: LogCapture;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => {
  executions.length = 0;
  logs.stop();
});

async function checkpointAfterFirstReview(location: string): Promise<string> {
  await new CycleFlow({
    bus: new EventBus(),
    checkpoint: { location, onEvents: ['method_execution_finished'] },
  }).kickoff();
  const provider = new JsonProvider();
  const checkpoints = await provider.list(provider.resolveLocation(location));
  const afterReview = checkpoints[1];
  if (!afterReview) throw new Error('expected checkpoints');
  return afterReview.reference;
}

class Approval extends Flow<{ verdict: string }> {
  initialState = { verdict: '' };

  @start() draft() {
    executions.push('draft');
    return 'a short essay';
  }

  @listen('draft') async approve(draft: string) {
    executions.push('approve');
    this.state.verdict = await this.ask(`Publish "${draft}"?`);
    return this.state.verdict;
  }

  @listen('approve') publish(verdict: string) {
    executions.push('publish');
    return verdict === 'yes' ? 'published' : 'discarded';
  }
}

describe('continuing a paused flow with an answer', () => {
  const registry = new ProjectRegistry().register({ flows: { Approval } });

  async function pausedCheckpoint(location: string): Promise<string> {
    const paused = await new Approval({ bus: new EventBus(), checkpoint: { location } }).kickoff();
    if (paused.status !== 'paused' || !paused.pause.resumeFrom) throw new Error('expected a pause');
    executions.length = 0;
    return paused.pause.resumeFrom;
  }

  it('answers with humanInput, in resume and in fork', async () => {
    const reference = await pausedCheckpoint(join(root, 'answer'));
    const resumed = await continueFromCheckpoint({
      reference,
      mode: 'resume',
      humanInput: 'yes',
      registry,
      bus: new EventBus(),
    });
    expect(resumed).toMatchObject({ kind: 'flow', name: 'Approval', output: 'published', branch: 'main' });
    expect(resumed.pause).toBeUndefined();
    // The method that asked runs again with the answer; the finished one does not.
    expect(executions).toEqual(['approve', 'publish']);

    const forked = await continueFromCheckpoint({
      reference,
      mode: 'fork',
      branch: 'said-no',
      humanInput: 'no',
      registry,
      bus: new EventBus(),
    });
    expect(forked).toMatchObject({ output: 'discarded', branch: 'said-no' });
  });

  it('without an answer asks again and says what it waits for and where to continue', async () => {
    const reference = await pausedCheckpoint(join(root, 'no-answer'));
    const again = await continueFromCheckpoint({ reference, mode: 'resume', registry, bus: new EventBus() });
    expect(again.pause).toMatchObject({
      methodName: 'approve',
      message: 'Publish "a short essay"?',
      kind: 'feedback',
    });
    expect(again.pause?.resumeFrom).toBe(again.lastCheckpoint);
    expect(again.output).toBe('paused in approve: Publish "a short essay"?');
    const answered = await continueFromCheckpoint({
      reference: again.pause!.resumeFrom!,
      mode: 'resume',
      humanInput: 'yes',
      registry,
      bus: new EventBus(),
    });
    expect(answered.output).toBe('published');
  });
});

describe('continuing flow checkpoints by registered name', () => {
  it('resumes and forks through continueFromCheckpoint with the class from the registry', async () => {
    const location = join(root, 'continue');
    const reference = await checkpointAfterFirstReview(location);
    executions.length = 0;
    const registry = new ProjectRegistry().register({ flows: { cycle: CycleFlow } });
    const resumed = await continueFromCheckpoint({
      reference,
      mode: 'resume',
      registry,
      bus: new EventBus(),
    });
    // The run went on past that checkpoint, so its continuation gets a branch of its own.
    expect(resumed).toMatchObject({
      kind: 'flow',
      name: 'CycleFlow',
      output: 'published after 3 rounds',
      branch: expect.stringMatching(/^fork\//),
    });
    expect(executions[0]).toBe('note');
    expect(executions.filter((method) => method === 'draft')).toHaveLength(2);
    expect(logs.expect(olderWarning)).toHaveLength(1);

    const forked = await continueFromCheckpoint({
      reference,
      mode: 'fork',
      branch: 'what-if',
      registry,
      bus: new EventBus(),
    });
    expect(forked.branch).toBe('what-if');
    expect(forked.lastCheckpoint).toContain('what-if');
  });

  it('gives a not_rebuildable error naming what to register when the class is unknown', async () => {
    const location = join(root, 'unregistered');
    const reference = await checkpointAfterFirstReview(location);
    const failure = await continueFromCheckpoint({
      reference,
      mode: 'resume',
      registry: new ProjectRegistry(),
      bus: new EventBus(),
    }).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'not_rebuildable')).toBe(true);
    expect((failure as Error).message).toContain("flows: { 'CycleFlow': CycleFlow }");
    const direct = await Flow.fromCheckpoint({ restoreFrom: reference }).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(direct, 'not_rebuildable')).toBe(true);
  });

  // Last: it registers CycleFlow for the whole process.
  it('returns an instance of the registered subclass from Flow.fromCheckpoint', async () => {
    const location = join(root, 'base-class');
    const reference = await checkpointAfterFirstReview(location);
    registerProject({ flows: { cycle: CycleFlow } });
    const restored = await Flow.fromCheckpoint({ restoreFrom: reference }, { bus: new EventBus() });
    expect(restored).toBeInstanceOf(CycleFlow);
    executions.length = 0;
    const result = await restored.kickoff();
    expect(result.output).toBe('published after 3 rounds');
    expect(executions[0]).toBe('note');
    expect(logs.expect(olderWarning)).toHaveLength(1);
  });
});
