import { join } from 'node:path';
import { type LogRecord, setLogSink } from '@crewline/events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Crew } from '../crew/crew.js';
import {
  checkpointFiles,
  lookupTool,
  temporaryDirectory,
  threeTaskCrew,
  toolUsingModel,
} from '../e2e/support/fixtures.js';
import { registerProject } from '../registry/project-config.js';

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

const olderWarning = (record: LogRecord) => record.message.includes('which is not the newest checkpoint');

describe('resuming a checkpoint that is not the newest of its branch', () => {
  it('warns that a second chain will grow on the branch, and says to fork instead', async () => {
    const location = join(directory.path, 'cp');
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const [first] = checkpointFiles(location);
    const restored = await Crew.fromCheckpoint({ restoreFrom: first!, location });
    await restored.kickoff();
    const warning = records.find(olderWarning);
    expect(warning?.message).toContain('fork instead');
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
