// The signal path gives up a run's lineage head before the process ends, while the run goes on; the
// next model call of a method's crew then throws `aborted` (details.reason 'lease_released'). Like a
// stop by the flow's abort signal, that is no failure of the method or of its crew: failure events
// written while the release is in flight would leave a latest checkpoint that shows a failed run for
// an interrupt. A resume runs the method again, continuing its crew's saved conversation.
import { type BaseEvent, EventBus } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { lookupFirst, lookupTool, SlowReleaseProvider } from '../checkpointing/test-support/lookup-run.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { Flow, listen, start } from './index.js';

const location = 'mem';

const control = { release: true, llm: lookupFirst(), ran: [] as string[] };

class Research extends Flow<{ notes: string }> {
  initialState = { notes: '' };
  @start() gather() {
    control.ran.push('gather');
    return 'tides';
  }
  @listen('gather') async research(topic: string) {
    control.ran.push('research');
    // Given up as the signal path does, while the method goes on.
    const lookup = lookupTool(() => control.release);
    const agent = new Agent({
      role: 'Researcher',
      goal: 'Research',
      backstory: 'Careful',
      llm: control.llm,
      tools: [lookup],
    });
    const crew = new Crew({
      tasks: [new Task({ description: `look ${topic} up`, expectedOutput: 'notes', agent })],
    });
    this.state.notes = (await crew.kickoff()).raw;
    return this.state.notes;
  }
}

const failureEvents = [
  'agent_execution_error',
  'task_failed',
  'crew_kickoff_failed',
  'method_execution_failed',
];

describe('a flow whose lease is given up while a method runs', () => {
  it('stops without recording a failure, and a resume continues the method', async () => {
    const provider = new SlowReleaseProvider();
    const bus = new EventBus();
    const events: BaseEvent[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => void events.push(event));
    await expect(
      new Research({ bus, checkpoint: { provider, location, onEvents: ['*'] } }).kickoff(),
    ).rejects.toMatchObject({ code: 'aborted', details: { reason: 'lease_released' } });
    expect(control.llm.calls).toHaveLength(1);
    const types = events.map((event) => event.type);
    for (const failure of failureEvents) expect(types).not.toContain(failure);
    const triggers = (await provider.list(location)).map((checkpoint) => checkpoint.trigger);
    for (const failure of failureEvents) expect(triggers).not.toContain(failure);

    // Another process continues once the release landed.
    await new Promise((resolve) => setTimeout(resolve, 120));
    control.release = false;
    control.llm = lookupFirst();
    control.ran = [];
    const restored = await Research.fromCheckpoint(
      { restoreFrom: location, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    expect(resumed.status).toBe('completed');
    expect(resumed.state.notes).toContain('offline model');
    expect(control.ran).toEqual(['research']);
    // The lookup's result was saved: only the answer is asked for.
    expect(control.llm.calls).toHaveLength(1);
  });
});
