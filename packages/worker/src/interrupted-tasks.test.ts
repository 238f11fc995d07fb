import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, Crew, Flow, providerRegistry, start, Task } from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import { type CheckpointDocument, readDocument } from '@crewline/runtime-state';
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

function reportCrew(location: string): Crew {
  const writer = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Plain', llm: model });
  return new Crew({
    agents: [writer],
    tasks: ['outline', 'article'].map(
      (name) =>
        new Task({
          name,
          description: `${name} about {topic}, fetched with key {apiKey}`,
          expectedOutput: 'Lines',
          agent: writer,
        }),
    ),
    checkpoint: { location, onEvents: ['llm_call_completed'] },
  });
}

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** The checkpoint of a run's last model call: its second task mid-way, its one call saved. */
async function lastCallCheckpoint(run: (location: string) => Promise<unknown>) {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-restart-warning-'));
  directories.push(directory);
  await run(directory);
  const registry = providerRegistry();
  const { provider } = await registry.open(directory);
  const written = await provider.list(directory);
  const last = [...written].sort((a, b) => a.eventCount - b.eventCount).at(-1)!;
  const document = await readDocument(provider, provider.resolveLocation(directory), last.id);
  await registry.close();
  return document;
}

function warningsOf(document: CheckpointDocument, inputs: Record<string, unknown> | undefined): string[] {
  const logs = captureLogs();
  try {
    warnAboutRestarts('run-1', document, inputs);
    return logs.records.filter((record) => record.level === 'warn').map((record) => record.message);
  } finally {
    logs.stop({ allowUnexpected: true });
  }
}

describe('warnAboutRestarts', () => {
  it('says why a crew task starts over: changed inputs, or a credential given again to a conversation holding it as [REDACTED]', async () => {
    const secret = 'sk-live-0123456789abcdefghij';
    const document = await lastCallCheckpoint((location) =>
      reportCrew(location).kickoff({ inputs: { topic: 'tides', apiKey: secret } }),
    );
    expect(warningsOf(document, { topic: 'tides' })).toEqual([]);
    // Nothing changed: the key the run had, given again (a fork passes every input of the row).
    expect(warningsOf(document, { topic: 'tides', apiKey: secret })).toEqual([
      'fork("run-1"): task 2 "article" was interrupted in the run; its saved conversation holds a credential as [REDACTED], so with the credential given again it starts over to send the model the real one instead of continuing that conversation; the 1 model call it had made is made again',
    ]);
    expect(warningsOf(document, { topic: 'kelp', apiKey: secret })).toEqual([
      'fork("run-1"): task 2 "article" was interrupted in the run; with the changed inputs it starts over instead of continuing its saved conversation, whose prompts hold the old inputs; the 1 model call it had made is made again',
    ]);
  });

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
