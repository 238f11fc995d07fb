import { join } from 'node:path';
import { type LogRecord, setLogSink } from '@crewline/events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Crew } from '../crew/crew.js';
import {
  checkpointFiles,
  lookupTool,
  readCheckpoint,
  temporaryDirectory,
  threeTaskCrew,
  toolUsingModel,
} from '../e2e/support/fixtures.js';
import { registerProject } from '../project-config/project-config.js';

let directory: { path: string; cleanup: () => void };
let records: LogRecord[];

beforeEach(() => {
  registerProject({ tools: { lookup: lookupTool } });
  directory = temporaryDirectory();
  records = [];
  setLogSink((record) => records.push(record));
});

afterEach(() => {
  setLogSink(null);
  directory.cleanup();
});

const olderWarning = (record: LogRecord) => record.message.includes('is not the latest of its run');

describe('resuming a checkpoint that is not the newest of its run', () => {
  it('continues on a new branch, says so, and leaves the run it came from as it was', async () => {
    const location = join(directory.path, 'cp');
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const before = checkpointFiles(location);
    const restored = await Crew.fromCheckpoint({ restoreFrom: before[0]!, location });
    await restored.kickoff();
    const warning = records.find(olderWarning);
    expect(warning?.message).toContain('continuing on a new branch');
    const after = checkpointFiles(location);
    for (const file of before) expect(after).toContain(file);
    const added = after.filter((file) => !before.includes(file)).map((file) => readCheckpoint(file).metadata);
    expect(added.length).toBeGreaterThan(0);
    expect(new Set(added.map((metadata) => metadata.branch)).size).toBe(1);
    expect(added[0]!.branch).toMatch(/^fork\//);
    expect(added[0]!.lineageId).not.toBe(readCheckpoint(before[0]!).metadata.lineageId);
    expect(
      added.find((metadata) => metadata.parentId === readCheckpoint(before[0]!).metadata.id),
    ).toBeDefined();
  });

  it('stays quiet when resuming the newest checkpoint', async () => {
    const location = join(directory.path, 'cp');
    const failing = toolUsingModel({
      failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Write'),
    });
    const { crew } = threeTaskCrew(failing, { checkpoint: { location } });
    await crew.kickoff({ inputs: { topic: 'AI' } }).catch(() => undefined);
    const files = checkpointFiles(location);
    const restored = await Crew.fromCheckpoint({ restoreFrom: files.at(-1)!, location });
    restored.agents.forEach((agent) => {
      agent.llm = toolUsingModel();
    });
    await restored.kickoff();
    expect(records.some(olderWarning)).toBe(false);
  });
});
