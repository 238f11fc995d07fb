// Runs the scenario of docs/flow-state-persistence.md step by step, counting the model calls of each.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setLogLevel } from '@crewline/events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerProject } from '../../project-config/project-config.js';
import { captureLogs, countCalls, type LogCapture, offlineModel } from '../../testing/index.js';
import { listFlowStates } from '../index.js';

const location = mkdtempSync(join(tmpdir(), 'crewline-report-flow-'));
const previousModel = process.env.CREWLINE_MODEL;
let outage = true;
// Fails the draft step while `outage` is set: the "crash in the middle of step 3" of the guide.
const model = offlineModel({
  failOn: (call) => outage && JSON.stringify(call.messages[0]).includes('Current task: Write a draft'),
});
let example: typeof import('./report-flow.js');

beforeAll(async () => {
  process.env.REPORT_STATES = location;
  process.env.CREWLINE_MODEL = 'test:report';
  registerProject({ models: { 'test:report': model } });
  example = await import('./report-flow.js');
});

afterAll(() => {
  if (previousModel === undefined) delete process.env.CREWLINE_MODEL;
  else process.env.CREWLINE_MODEL = previousModel;
  delete process.env.REPORT_STATES;
  rmSync(location, { recursive: true, force: true });
});

// Re-running from an older save continues on a new branch, and says so.
const olderWarning = 'is not the latest of its run';
let logs: LogCapture;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => logs.stop());

// Crew prompts name their task as "Current task: <description>".
const calledFor = (task: string) =>
  countCalls(model, (call) => JSON.stringify(call.messages[0]).includes(`Current task: ${task}`));

describe('the report flow of docs/flow-state-persistence.md', () => {
  it('persists, finds the id, and restarts without re-running finished steps', async () => {
    // Steps 1-2: the first run dies in the draft step.
    await expect(example.runReport('tides-report')).rejects.toThrow();
    expect(model.calls).toHaveLength(3); // research, outline, the failed draft

    // Step 3: the id is found again, from code and with the function the CLI uses.
    const [saved] = await example.savedReports();
    expect(saved).toMatchObject({ id: 'tides-report', flowName: 'ReportFlow', lastMethod: 'outline' });
    expect(await listFlowStates(location)).toEqual(await example.savedReports());

    // Step 4: the same call continues at the draft; research and outline are not run again.
    outage = false;
    model.reset();
    const finished = await example.runReport('tides-report');
    expect(finished.status).toBe('completed');
    expect(finished.completedMethods).toEqual(['research', 'outline', 'draft', 'edit']);
    expect(calledFor('Collect facts')).toBe(0);
    expect(calledFor('Outline a report')).toBe(0);
    expect(calledFor('Write a draft')).toBe(1);
    expect(calledFor('Tighten this draft')).toBe(1);
    expect(finished.state.research).not.toBe('');

    // Running it again does nothing: every step is done.
    model.reset();
    await example.runReport('tides-report');
    expect(model.calls).toHaveLength(0);

    // Step 5: re-run everything after the outline (e.g. after changing the draft prompt).
    const rerun = await example.rerunAfter('tides-report', 'outline');
    expect(rerun?.status).toBe('completed');
    expect(calledFor('Collect facts')).toBe(0);
    expect(calledFor('Outline a report')).toBe(0);
    expect(calledFor('Write a draft')).toBe(1);
    expect(calledFor('Tighten this draft')).toBe(1);
    expect(rerun?.stateId).toBe('tides-report');
    expect(logs.expect(olderWarning)).toHaveLength(1);
    const [latest] = await listFlowStates(location);
    expect(latest?.reference).not.toBe(saved?.reference);
  });

  it('re-runs one step and everything after it with one call, kickoff({ inputs: { id }, rerunFrom })', async () => {
    outage = false;
    await example.runReport('rerun-report');
    model.reset();
    const rerun = await example.rerunFromStep('rerun-report', 'draft');
    expect(rerun.status).toBe('completed');
    expect(rerun.stateId).toBe('rerun-report');
    expect(rerun.completedMethods).toEqual(['research', 'outline', 'draft', 'edit']);
    expect(calledFor('Collect facts')).toBe(0);
    expect(calledFor('Outline a report')).toBe(0);
    expect(calledFor('Write a draft')).toBe(1);
    expect(calledFor('Tighten this draft')).toBe(1);
    expect(rerun.state.research).not.toBe('');

    // Only the last step, twice in a row: each time from the save made after the draft.
    model.reset();
    setLogLevel('info');
    try {
      await example.rerunFromStep('rerun-report', 'edit');
      await example.rerunFromStep('rerun-report', 'edit');
    } finally {
      setLogLevel('warn');
    }
    expect(model.calls).toHaveLength(2);
    expect(calledFor('Tighten this draft')).toBe(2);
    // A re-run moves to a new branch because it asked to: said at info level, not warned about
    // (trial: `flows rerun` warned each time, beside its own "forked onto branch").
    const moved = logs.records.filter((record) => record.message.includes(olderWarning));
    expect(moved.map((record) => record.level)).toEqual(['info', 'info']);

    await expect(example.rerunFromStep('rerun-report', 'polish' as never)).rejects.toThrow(
      /rerunFrom "polish" is not a method of flow "ReportFlow"; its methods are research, outline, draft, edit/,
    );
    await expect(example.rerunFromStep('no-such-report', 'draft')).rejects.toThrow(
      /no saves of flow state "no-such-report" of ReportFlow/,
    );
  });
});
