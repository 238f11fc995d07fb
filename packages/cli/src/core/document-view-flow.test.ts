import { Agent, Crew, Flow, start, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { inputLines } from '../tui/state/panels.js';
import { checkpointReport } from './checkpoint-report.js';
import { inputNames, viewDocument } from './document-view.js';

// The trial: `info` of a flow listed "placeholders without a value: {topic}" although the flow gave
// its crew the topic: only the flow's kickoff inputs were looked at, not what the crew received.

const model = offlineModel({ name: 'view-flow' });

function reportCrew(checkpoint?: ConstructorParameters<typeof Crew>[0]['checkpoint']): Crew {
  const writer = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Plain', llm: model });
  return new Crew({
    agents: [writer],
    tasks: [new Task({ description: 'Report on {topic}', expectedOutput: 'Lines', agent: writer })],
    ...(checkpoint ? { checkpoint } : {}),
  });
}

class SubjectFlow extends Flow<{ subject: string }> {
  initialState = { subject: 'tides' };
  @start()
  async write() {
    // The crew's {topic} comes from the flow's state under another name: only the crew's own inputs hold it.
    return (await reportCrew().kickoff({ inputs: { topic: this.state.subject }, bus: this.bus })).raw;
  }
}

async function lastView(kickoff: (provider: InMemoryProvider) => Promise<unknown>) {
  const provider = new InMemoryProvider();
  await kickoff(provider);
  const written = await provider.list('x');
  const last = [...written].sort((a, b) => a.eventCount - b.eventCount).at(-1)!;
  return viewDocument(await readDocument(provider, 'x', last.id));
}

describe('placeholders without a value in a flow checkpoint', () => {
  it('counts what the flow passed its crew: no {topic} without a value, in info, the TUI and the explorer', async () => {
    const view = await lastView((provider) =>
      new SubjectFlow({ checkpoint: { location: 'x', provider, onEvents: ['task_completed'] } }).kickoff(),
    );
    expect(view.inputs).toEqual({});
    expect(view.placeholders).toEqual(['topic']);
    expect(inputNames(view)).toEqual([]);
    expect(inputLines(view, { inputs: {}, taskOutputs: {} } as never).lines).toEqual([
      [{ text: '(no inputs and no placeholders)' }],
    ]);
    const report = checkpointReport({ checkpoint: { reference: 'x', sizeBytes: 1 } } as never, view, {
      cwd: '/',
    }).join('\n');
    expect(report).not.toContain('placeholders without a value');
    expect(view.missingPlaceholders).toEqual([]);
  });

  it('still names a placeholder a crew was given no value for', async () => {
    const view = await lastView((provider) =>
      reportCrew({ location: 'x', provider, onEvents: ['task_completed'] }).kickoff(),
    );
    expect(view.missingPlaceholders).toEqual(['topic']);
    expect(inputNames(view)).toEqual(['topic']);
  });
});
