// Kill -9 and restart across real processes: each flow runs in a child process that is SIGKILLed at
// a chosen moment; a new process continues it. Outcomes are compared with uninterrupted runs and
// method executions (and LLM calls) are counted across both processes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildScript, concurrencyLimit } from '../e2e/support/child-process.js';
import { listFlowStates } from './index.js';
import type { ChildRequest, KillPoint } from './test-support/flow-child.js';
import { type ChildRun, prepareFlowChild, runChild as runScript } from './test-support/run-child.js';
import { CycleFlow, executions, JoinFlow, LinearFlow, LoopFlow, PassFlow } from './test-support/scenarios.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-flow-process-'));
let script: ChildScript;
beforeAll(async () => {
  script = await prepareFlowChild();
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  script.dispose();
});
// Two children at a time: the test machine has two cores.
const slot = concurrencyLimit(2);
const runChild = (requests: ChildRequest[], env?: Record<string, string>) =>
  slot(() => runScript(script, requests, env));

function countBy(items: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}

function withoutId(state: Record<string, unknown> | undefined): Record<string, unknown> {
  const { id: _id, ...rest } = state ?? {};
  return rest;
}

interface KillCase {
  name: string;
  scenario: 'LinearFlow' | 'JoinFlow' | 'CycleFlow' | 'LoopFlow' | 'PassFlow';
  onEvents: string[];
  killAt: KillPoint;
  /** The method whose body was running at the kill (it runs again on resume). */
  interrupted?: string;
}

const killCases: KillCase[] = [
  {
    name: 'linear, after clean finished',
    scenario: 'LinearFlow',
    onEvents: ['*'],
    killAt: { kind: 'event', type: 'method_execution_finished', method: 'clean' },
  },
  {
    name: 'linear, inside clean',
    scenario: 'LinearFlow',
    onEvents: ['*'],
    killAt: { kind: 'exec', method: 'clean' },
    interrupted: 'clean',
  },
  {
    name: 'and/or, after first while right still runs',
    scenario: 'JoinFlow',
    onEvents: ['*'],
    killAt: { kind: 'event', type: 'method_execution_finished', method: 'first' },
    interrupted: 'right',
  },
  {
    name: 'and/or, inside both',
    scenario: 'JoinFlow',
    onEvents: ['method_execution_finished'],
    killAt: { kind: 'exec', method: 'both' },
    interrupted: 'both',
  },
  {
    name: 'router cycle, after the second review',
    scenario: 'CycleFlow',
    onEvents: ['*'],
    killAt: { kind: 'event', type: 'method_execution_finished', method: 'review', occurrence: 2 },
  },
  {
    name: 'router cycle, inside the third draft',
    scenario: 'CycleFlow',
    onEvents: ['method_execution_finished'],
    killAt: { kind: 'exec', method: 'draft', occurrence: 3 },
    interrupted: 'draft',
  },
  {
    name: 'or() router loop, after the second pass of check',
    scenario: 'LoopFlow',
    onEvents: ['*'],
    killAt: { kind: 'event', type: 'method_execution_finished', method: 'check', occurrence: 2 },
  },
  {
    name: 'and() join per pass, inside the second join',
    scenario: 'PassFlow',
    onEvents: ['method_execution_finished'],
    killAt: { kind: 'exec', method: 'join', occurrence: 2 },
    interrupted: 'join',
  },
];

const classes = { LinearFlow, JoinFlow, CycleFlow, LoopFlow, PassFlow };

async function uninterrupted(scenario: KillCase['scenario']) {
  executions.length = 0;
  const result = await new classes[scenario]({ bus: new EventBus() }).kickoff();
  return { result, counts: countBy(executions) };
}

describe('flows killed with SIGKILL and continued in a new process', () => {
  it('end like uninterrupted runs, re-running only the method that was interrupted', async () => {
    const persistLocation = join(root, 'persisted');
    const killRequests: ChildRequest[] = killCases.map((killCase, index) => ({
      scenario: killCase.scenario,
      mode: 'run',
      location: join(root, `kill-${index}`),
      onEvents: killCase.onEvents,
      stateId: `state-${index}`,
      killAt: killCase.killAt,
    }));
    const crewKill: ChildRequest = {
      scenario: 'TwoCrewFlow',
      mode: 'run',
      location: join(root, 'crews'),
      onEvents: ['task_completed'],
      stateId: 'crews',
      // The third task_completed is the first task of the second crew.
      killAt: { kind: 'event', type: 'task_completed', occurrence: 3 },
    };
    const persistKill: ChildRequest = {
      scenario: 'PersistentFlow',
      mode: 'run',
      location: persistLocation,
      stateId: 'persisted-1',
      killAt: { kind: 'exec', method: 'report' },
    };
    const pauseRuns: ChildRequest[] = [
      { scenario: 'PausingFlow', mode: 'run', location: persistLocation, stateId: 'essay-by-id' },
      { scenario: 'PausingFlow', mode: 'run', location: persistLocation, stateId: 'essay-by-reference' },
    ];
    const env = { CREWLINE_FLOW_TEST_LOCATION: persistLocation };

    // First processes: killed at their kill point (or, for the pausing flows, ending paused).
    const [killed, [crewKilled], [persistKilled], paused] = await Promise.all([
      Promise.all(killRequests.map(async (request) => (await runChild([request]))[0] as ChildRun)),
      runChild([crewKill]),
      runChild([persistKill], env),
      runChild(pauseRuns, env),
    ]);
    for (const run of [...killed, crewKilled, persistKilled]) expect(run?.killed).toBe(true);
    const [pausedById, pausedByReference] = paused as [ChildRun, ChildRun];
    expect(pausedById.result?.status).toBe('paused');
    expect(pausedById.executions).toEqual(['write', 'approve']);
    const reference = pausedByReference.result?.pause?.resumeFrom;
    expect(reference).toBeTypeOf('string');

    // One new process continues everything.
    const continued = await runChild(
      [
        ...killRequests.map(
          (request): ChildRequest => ({
            scenario: request.scenario,
            mode: 'resume',
            location: request.location,
          }),
        ),
        { scenario: 'TwoCrewFlow', mode: 'resume', location: crewKill.location },
        {
          scenario: 'PersistentFlow',
          mode: 'kickoff-by-id',
          location: persistLocation,
          stateId: 'persisted-1',
        },
        {
          scenario: 'PausingFlow',
          mode: 'answer',
          location: persistLocation,
          stateId: 'essay-by-id',
          answer: 'yes',
        },
        {
          scenario: 'PausingFlow',
          mode: 'answer',
          location: persistLocation,
          reference: reference as string,
          answer: 'no',
        },
      ],
      env,
    );

    for (const [index, killCase] of killCases.entries()) {
      const expected = await uninterrupted(killCase.scenario);
      const first = killed[index] as ChildRun;
      const second = continued[index] as ChildRun;
      const context = killCase.name;
      expect(second.result?.status, context).toBe('completed');
      expect(second.result?.stateId, context).toBe(`state-${index}`);
      expect(withoutId(second.result?.state), context).toEqual(withoutId(expected.result.state as never));
      expect(second.result?.output, context).toEqual(expected.result.output);
      const total = countBy([...first.executions, ...second.executions]);
      const wanted = { ...expected.counts };
      if (killCase.interrupted && first.executions.includes(killCase.interrupted)) {
        wanted[killCase.interrupted] = (wanted[killCase.interrupted] ?? 0) + 1;
      }
      expect(total, context).toEqual(wanted);
    }

    // Two crews: the resumed process continues inside the second crew; the first crew is not run again.
    const crewResumed = continued[killCases.length] as ChildRun;
    expect(crewKilled?.executions).toEqual(['research', 'write']);
    expect(crewKilled?.llmCalls).toBe(3);
    expect(crewResumed.executions).toEqual(['write']);
    expect(crewResumed.llmCalls).toBe(2);
    expect(crewResumed.result?.status).toBe('completed');
    expect(crewResumed.result?.completedMethods).toEqual(['research', 'write']);
    // write ran twice (killed inside its crew, then again), yet its state change counts once.
    expect(crewResumed.result?.state).toMatchObject({ writeAttempts: 1 });

    // @persist: the new process restores state "persisted-1" and skips the completed methods.
    const persistResumed = continued[killCases.length + 1] as ChildRun;
    expect(persistKilled?.executions).toEqual(['increment', 'double', 'report']);
    expect(persistResumed.executions).toEqual(['report']);
    expect(persistResumed.result?.state).toMatchObject({ value: 2, log: ['increment', 'double', 'report'] });
    expect(persistResumed.result?.output).toBe('value is 2');
    const states = await listFlowStates(persistLocation);
    expect(states.find((state) => state.id === 'persisted-1')).toMatchObject({
      flowName: 'PersistentFlow',
      lastMethod: 'report',
      status: 'completed',
    });

    // Pause: answered in a new process, by state id and by checkpoint reference.
    const answeredById = continued[killCases.length + 2] as ChildRun;
    expect(answeredById.executions).toEqual(['approve', 'publish']);
    expect(answeredById.result?.output).toBe('published an essay on tides');
    const answeredByReference = continued[killCases.length + 3] as ChildRun;
    expect(answeredByReference.executions).toEqual(['approve', 'publish']);
    expect(answeredByReference.result?.output).toBe('discarded');
  }, 90_000);
});
