// Parts of the small runs the tests of a run's end share: a model that calls the lookup tool first
// in each conversation, that tool (which can give the run's lease up first, as the signal path does
// before the process ends while the run goes on), and a store whose release takes a round trip.
import type { LeaseToken } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { z } from 'zod';
import { type OfflineModel, offlineModel } from '../../models/offline/offline-model.js';
import { type CrewlineTool, defineTool } from '../../tools/define-tool.js';
import { Run } from '../run.js';

/** A store whose release takes a round trip (Postgres): the lease still holds while it is in flight. */
export class SlowReleaseProvider extends InMemoryProvider {
  override async releaseLease(target: string, token: LeaseToken): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 60));
    await super.releaseLease(target, token);
  }
}

/** A model that calls `lookup` first in each conversation, then answers. */
export function lookupFirst(): OfflineModel {
  return offlineModel({
    script: (call) =>
      call.tools.length > 0 && !call.messages.some((message) => message.role === 'assistant')
        ? { toolName: 'lookup', input: { query: 'tides' } }
        : undefined,
  });
}

/**
 * The `lookup` tool; while `releases()` is true, each call gives the run's lease up first, as the
 * signal path does, and goes on.
 */
export function lookupTool(releases: () => boolean = () => false): CrewlineTool {
  return defineTool({
    name: 'lookup',
    description: 'Looks a subject up',
    inputSchema: z.object({ query: z.string() }),
    execute: async ({ query }) => {
      if (releases()) void Run.current()!.releaseLease();
      return `notes about ${query}`;
    },
  });
}
