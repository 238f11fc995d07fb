// Review finding "Retention deletes a fork point": run A (maxCheckpoints 2) fails at task 3; B is
// forked from A's older kept checkpoint X (maxCheckpoints 2) and runs to the end; then A resumes.
// B's own retention pruned B's first checkpoint, the only one naming X, and A's retention then
// removed X: B could no longer be linked to A from storage. Retention now keeps a fork's first
// checkpoint (planPrune), so X stays.
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';

let directory: { path: string; cleanup: () => void };
beforeEach(() => {
  directory = temporaryDirectory('crewline-fork-retention-');
});
afterEach(() => directory.cleanup());

const providers: [string, () => CheckpointProvider, string][] = [
  ['JsonProvider', () => new JsonProvider(), 'checkpoints'],
  ['SqliteProvider', () => new SqliteProvider(), 'checkpoints.db'],
];

describe.each(providers)(
  'a fork whose own retention ran before its origin resumed (%s)',
  (_name, create, file) => {
    it('keeps the fork point and the checkpoint of the fork that names it', async () => {
      const provider = create();
      const location = join(directory.path, file);
      let failing = true;
      const model = offlineModel({
        failOn: (call) => (failing && call.userText.includes('task 3') ? 'rate limited' : false),
      });
      const agent = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Clear', llm: model });
      const checkpoint = {
        location,
        provider,
        onEvents: ['task_completed', 'crew_kickoff_completed'] as const,
        maxCheckpoints: 2,
      };
      const crew = () =>
        new Crew({
          agents: [agent],
          tasks: [1, 2, 3, 4, 5].map(
            (index) => new Task({ description: `task ${index}`, expectedOutput: 'text', agent }),
          ),
          checkpoint: { ...checkpoint, onEvents: [...checkpoint.onEvents] },
        });
      await expect(crew().kickoff({ bus: new EventBus() })).rejects.toThrow();
      const kept = await provider.list(location);
      expect(kept).toHaveLength(2);
      const [forkPoint, head] = kept as [(typeof kept)[0], (typeof kept)[0]];
      failing = false;

      const fork = await Crew.fork(
        { ...checkpoint, onEvents: [...checkpoint.onEvents], restoreFrom: forkPoint.reference },
        { branch: 'b' },
      );
      await fork.kickoff({ bus: new EventBus() });
      await crew().kickoff({
        bus: new EventBus(),
        fromCheckpoint: { ...checkpoint, onEvents: [...checkpoint.onEvents], restoreFrom: head.reference },
      });

      const all = await provider.list(location);
      expect(all.map((entry) => entry.id)).toContain(forkPoint.id);
      const forked = all.filter((entry) => entry.branch === 'b');
      // The fork's first checkpoint (naming the fork point) and its newest two.
      expect(forked).toHaveLength(3);
      expect(forked[0]!.parentId).toBe(forkPoint.id);
      expect(forked.at(-1)!.trigger).toBe('crew_kickoff_completed');
      await provider.close?.();
    });
  },
);
