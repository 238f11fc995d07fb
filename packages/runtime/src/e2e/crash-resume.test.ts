// Crash trials in real child processes: a 3-task crew checkpointing on '*' is SIGKILLed right after
// each event of its run (after that event's checkpoint was written), then resumed in a new process.
// Also a real Ctrl+C: SIGINT mid-run leaves a SIGINT checkpoint, no partial file, and the default exit.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BaseEvent, checkpointLifecycleEventTypes, EventBus } from '@crewline/events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChildScript,
  exited,
  limited,
  prepareChildScript,
  startChild as startScript,
} from './support/child-process.js';
import { crashCrew, crashInputs, crashModel } from './support/crash-crew.js';
import { allFiles, checkpointFiles, readCheckpoint, temporaryDirectory } from './support/fixtures.js';

let childScript: ChildScript;
const startChild = (args: string[]) => startScript(childScript, args);

const lifecycle = new Set<string>(checkpointLifecycleEventTypes);
let directory: { path: string; cleanup: () => void };
let expectedOutput = '';
let eventCount = 0;

beforeAll(async () => {
  directory = temporaryDirectory();
  childScript = await prepareChildScript(fileURLToPath(new URL('./support/crash-child.ts', import.meta.url)));
  // The uninterrupted reference, in this process: same crew, same deterministic offline model.
  const bus = new EventBus();
  const events: BaseEvent[] = [];
  bus.onAny(
    (_source: unknown, event: BaseEvent) => void (lifecycle.has(event.type) ? undefined : events.push(event)),
  );
  const output = await crashCrew(crashModel(), {
    location: join(directory.path, 'reference'),
    onEvents: ['*'],
  }).kickoff({
    inputs: crashInputs,
    bus,
  });
  expectedOutput = output.raw;
  eventCount = events.length;
});

afterAll(() => {
  directory.cleanup();
  childScript.dispose();
});

describe('SIGKILL after every event, then resume in a new process', () => {
  it('resumes to the uninterrupted output and never repeats a checkpointed model call', {
    timeout: 180_000,
  }, async () => {
    expect(eventCount).toBeGreaterThan(20);
    const killPoints = Array.from({ length: eventCount }, (_, index) => index + 1);
    const locations = await limited(
      2,
      killPoints.map((killAfter) => async () => {
        const location = join(directory.path, `kill-after-${killAfter}`);
        const { child, waitFor } = startChild(['run', location, String(killAfter)]);
        const frozen = await waitFor(/^frozen /);
        expect(frozen).toMatch(new RegExp(`^frozen ${killAfter} `));
        child.kill('SIGKILL');
        expect((await exited(child)).signal).toBe('SIGKILL');
        // Every file the killed process left is a whole, valid checkpoint.
        for (const file of checkpointFiles(location)) readCheckpoint(file);
        return location;
      }),
    );
    // Resumes run in two fresh processes, each continuing half of the killed runs.
    const halves = [
      locations.filter((_, index) => index % 2 === 0),
      locations.filter((_, index) => index % 2 === 1),
    ];
    const reports = (
      await Promise.all(
        halves.map(async (half) => {
          const { child, lines } = startChild(['resume', ...half]);
          const { code } = await exited(child);
          expect(code).toBe(0);
          return lines
            .filter((line) => line.startsWith('{'))
            .map(
              (line) =>
                JSON.parse(line) as {
                  location: string;
                  raw: string;
                  repeated: string[];
                  calls: number;
                  trigger: string;
                },
            );
        }),
      )
    ).flat();
    expect(reports).toHaveLength(eventCount);
    for (const report of reports) {
      expect(report.repeated, report.location).toEqual([]);
      expect(report.raw, report.location).toBe(expectedOutput);
      const final = readCheckpoint(checkpointFiles(report.location).at(-1)!);
      expect(final.metadata.trigger).toBe('crew_kickoff_completed');
      // One kickoff in the whole history, however often the run was interrupted.
      expect(final.events.filter((event) => event.type === 'crew_kickoff_started')).toHaveLength(1);
    }
    // Killed after its last event: nothing is left to do, so no model call at all.
    expect(reports.find((report) => report.location.endsWith(`kill-after-${eventCount}`))!.calls).toBe(0);
  });
});

describe('Ctrl+C (SIGINT) during a run', () => {
  it('writes a SIGINT checkpoint, leaves no partial file, and exits by the signal as Node would', {
    timeout: 60_000,
  }, async () => {
    const location = join(directory.path, 'sigint');
    const { child, waitFor } = startChild(['sigint', location]);
    await waitFor(/^event llm_call_started/); // the first model call is in flight (300 ms)
    child.kill('SIGINT');
    const { code, signal } = await exited(child);
    expect(signal).toBe('SIGINT');
    expect(code).toBeNull();
    const files = allFiles(location);
    expect(files.every((file) => file.endsWith('.json'))).toBe(true);
    const checkpoints = checkpointFiles(location);
    expect(checkpoints).toHaveLength(1);
    for (const file of checkpoints) JSON.parse(readFileSync(file, 'utf8'));
    const document = readCheckpoint(checkpoints[0]!);
    expect(document.metadata.trigger).toBe('SIGINT');
    expect(document.events.at(-1)!.type).toBe('SIGINT');

    const resumed = startChild(['resume', location]);
    expect((await exited(resumed.child)).code).toBe(0);
    const report = JSON.parse(resumed.lines.find((line) => line.startsWith('{'))!) as {
      raw: string;
      repeated: string[];
    };
    expect(report.raw).toBe(expectedOutput);
    expect(report.repeated).toEqual([]);
  });
});
