// A timer a run's tool started fires after kickoff returned: what it emits belongs to no run any
// more (not recorded in the ended run's history, no checkpoint tried after its lease was released),
// and listeners hear it as they hear any event emitted outside a run.
import { type BaseEvent, EventBus, ToolUsageFinishedEvent } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { offlineModel, researchWriteReview } from '../e2e/support/fixtures.js';
import { Task } from '../task/task.js';
import { captureLogs } from '../testing/capture-logs.js';
import { defineTool } from '../tools/define-tool.js';
import { Run } from './run.js';

function late(toolCallId: string): ToolUsageFinishedEvent {
  return new ToolUsageFinishedEvent({ toolName: 'lookup', toolCallId, result: 'late' });
}

describe('an event a timer of an ended run emits', () => {
  it('is heard outside any run: not recorded in the run, not checkpointed, nothing warned', async () => {
    const bus = new EventBus();
    const provider = new InMemoryProvider();
    let fired: Promise<Run | undefined> | undefined;
    // Started inside the run's first tool call; fires once the kickoff has returned.
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a subject up',
      inputSchema: z.object({ query: z.string() }),
      execute: ({ query }) => {
        const run = Run.current();
        fired ??= new Promise((resolve) =>
          setTimeout(() => {
            // On the run's bus, from the run's async context, and through the run itself.
            bus.emit(null, late('on-the-bus'));
            run?.emit(null, late('through-the-run'));
            resolve(Run.current());
          }, 100),
        );
        return `notes about ${query}`;
      },
    });
    const model = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'the subject' } }] });
    const agent = (role: string) =>
      new Agent({ role, goal: 'G', backstory: 'B', llm: model, tools: [lookup] });
    const crew = new Crew({
      tasks: researchWriteReview(agent('Researcher'), agent('Writer'), agent('Reviewer')),
      checkpoint: { location: 'memory', provider, onEvents: ['*'] },
    });
    const heard: string[] = [];
    const heardInRun: string[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => {
      if (event instanceof ToolUsageFinishedEvent) heard.push(event.toolCallId);
    });
    bus.onAny((_source: unknown, event: BaseEvent, _state: unknown) => {
      if (event instanceof ToolUsageFinishedEvent) heardInRun.push(event.toolCallId);
    });
    const logs = captureLogs();
    try {
      await crew.kickoff({ inputs: { topic: 'AI' }, bus });
      const run = crew.lastRun!;
      const history = run.state.events.length;
      const checkpoints = (await provider.list('memory')).length;
      heard.length = 0;
      heardInRun.length = 0;
      expect(fired).toBeDefined();
      // The timer joins no run, as a kickoff from it would not.
      expect(await fired).toBeUndefined();
      await bus.flush();
      await run.state.settle();
      expect(heard).toEqual(['on-the-bus', 'through-the-run']);
      expect(heardInRun).toEqual([]);
      expect(run.state.events).toHaveLength(history);
      expect(await provider.list('memory')).toHaveLength(checkpoints);
      logs.stop();
    } finally {
      logs.stop({ allowUnexpected: true });
    }
  });

  // Found by a review: the bus's scope spanned the lease's release, so an event fired while a remote
  // store answered the release was still the run's and tried a checkpoint against the released lease.
  it("while the lease is being released is not the run's either", async () => {
    const bus = new EventBus();
    let released!: () => void;
    const releasedNow = new Promise<void>((resolve) => {
      released = resolve;
    });
    /** Releases at once; its answer reaches the process 30 ms later (a remote database). */
    class RemoteStore extends InMemoryProvider {
      override async releaseLease(...args: Parameters<InMemoryProvider['releaseLease']>): Promise<void> {
        await super.releaseLease(...args);
        released();
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    }
    const provider = new RemoteStore();
    let fired: Promise<void> | undefined;
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a subject up',
      inputSchema: z.object({ query: z.string() }),
      execute: ({ query }) => {
        // Left behind by the tool: fires 5 ms after the store released the lease.
        fired ??= releasedNow.then(
          () =>
            new Promise<void>((resolve) =>
              setTimeout(() => {
                bus.emit(null, late('during-release'));
                resolve();
              }, 5),
            ),
        );
        return `notes about ${query}`;
      },
    });
    const model = offlineModel({ name: 'release', script: [{ toolName: 'lookup', input: { query: 'x' } }] });
    const agent = new Agent({ role: 'Researcher', goal: 'G', backstory: 'B', llm: model, tools: [lookup] });
    const crew = new Crew({
      agents: [agent],
      tasks: [new Task({ description: 'Research', expectedOutput: 'notes', agent })],
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    });
    const heardInRun: string[] = [];
    bus.onAny((_source: unknown, event: BaseEvent, _state: unknown) => {
      if (event instanceof ToolUsageFinishedEvent) heardInRun.push(event.toolCallId);
    });
    const logs = captureLogs();
    try {
      await crew.kickoff({ bus });
      await fired;
      const recorded = crew.lastRun!.state.events.some(
        (event) => (event as { toolCallId?: string }).toolCallId === 'during-release',
      );
      expect({ heardInRun: heardInRun.filter((id) => id === 'during-release'), recorded }).toEqual({
        heardInRun: [],
        recorded: false,
      });
      expect(logs.unexpected().map((record) => record.message)).toEqual([]);
    } finally {
      logs.stop({ allowUnexpected: true });
    }
  });
});
