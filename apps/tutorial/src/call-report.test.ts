import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { offlineModel } from '@crewline/runtime/testing';
import { describe, expect, it } from 'vitest';
import { callReport, writeCallReport } from './call-report.js';

describe('callReport', () => {
  it('names the agent and the task of each request the offline model received', async () => {
    const model = offlineModel({ name: 'tutorial' });
    await model.doGenerate({
      prompt: [
        { role: 'system', content: 'You are Writer. You write.\nYour personal goal is: write' },
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: 'Current task: Write a summary\n\nThis is the context you are working with:\nresearch notes',
            },
          ],
        },
      ],
    });
    const report = callReport(model);
    expect(report).toMatchObject({ model: 'offline:tutorial', count: 1 });
    expect(report.calls[0]).toMatchObject({ index: 1, agentRole: 'Writer', task: 'Write a summary' });
    expect(report.calls[0]!.userText).toContain('research notes');

    const directory = mkdtempSync(join(tmpdir(), 'call-report-'));
    try {
      const file = join(directory, 'calls.json');
      writeCallReport(model, file);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(report);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
