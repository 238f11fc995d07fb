import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, Crew, Flow, providerRegistry, start, Task } from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import { readDocument } from '@crewline/runtime-state';
import { afterEach, describe, expect, it } from 'vitest';
import { warnAboutRestarts } from './interrupted-tasks.js';

// Found by a review: the fork warning compared a flow's kickoff inputs, where the runtime compares
// what the flow's method gives its crew, and announced a restart (and its cost) for a flow that
// then continued its saved conversation.

const model = offlineModel({ name: 'restart-warning' });

class ArticleFlow extends Flow<{ topic: string; audience: string }> {
  initialState = { topic: 'tides', audience: 'kids' };
  @start()
  async write() {
    // The crew gets only the topic: the audience is the flow's business.
    const writer = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Plain', llm: model });
    const crew = new Crew({
      agents: [writer],
      tasks: ['outline', 'article'].map(
        (name) =>
          new Task({ name, description: `${name} about {topic}`, expectedOutput: 'Lines', agent: writer }),
      ),
    });
    return (await crew.kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })).raw;
  }
}

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('warnAboutRestarts', () => {
  it('says a flow decides, not that its interrupted task starts over, when the inputs change the flow state', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'crewline-restart-warning-'));
    directories.push(directory);
    await new ArticleFlow({
      checkpoint: { location: directory, onEvents: ['llm_call_completed'] },
    }).kickoff({ inputs: { topic: 'tides', audience: 'kids' } });
    const registry = providerRegistry();
    const { provider } = await registry.open(directory);
    // The last model call's checkpoint: the second task mid-way, its one call saved.
    const written = await provider.list(directory);
    const last = [...written].sort((a, b) => a.eventCount - b.eventCount).at(-1)!;
    const document = await readDocument(provider, provider.resolveLocation(directory), last.id);
    await registry.close();

    const warnings = (inputs: Record<string, unknown> | undefined) => {
      const logs = captureLogs();
      try {
        warnAboutRestarts('run-1', document, inputs);
        return logs.records.filter((record) => record.level === 'warn').map((record) => record.message);
      } finally {
        logs.stop({ allowUnexpected: true });
      }
    };
    expect(warnings(undefined)).toEqual([]);
    expect(warnings({ topic: 'tides', audience: 'kids' })).toEqual([]);
    expect(warnings({ audience: 'adults' })).toEqual([
      'fork("run-1"): task 2 "article" was interrupted in the run; it continues its saved conversation unless the flow gives its crew other inputs with the changed ones, then starts over; the 1 model call it had made is made again',
    ]);
  });
});
