// Resuming a run another process holds, when the caller asked to fork in that case
// (`onConflict: 'fork'`): the warning says the run continues on a new branch because the run is
// held, and by whom; no advice to wait or to fork (the caller chose already), one component prefix.
import { join } from 'node:path';
import { type LogRecord, setLogSink } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Crew } from '../crew/crew.js';
import { lookupTool, temporaryDirectory, threeTaskCrew, toolUsingModel } from '../e2e/support/fixtures.js';
import { registerProject } from '../project-config/project-config.js';

let directory: { path: string; cleanup: () => void };
let records: LogRecord[];
const providers: CheckpointProvider[] = [];

beforeEach(() => {
  registerProject({ tools: { lookup: lookupTool } });
  directory = temporaryDirectory();
  records = [];
  setLogSink((record) => records.push(record));
});

afterEach(async () => {
  setLogSink(null);
  for (const provider of providers.splice(0)) await provider.close?.();
  directory.cleanup();
});

const stores = {
  sqlite: { location: 'runs.db', make: () => new SqliteProvider() },
  json: { location: 'runs', make: () => new JsonProvider() },
};

describe.each(['sqlite', 'json'] as const)(
  'onConflict fork while another process holds the run (%s)',
  (kind) => {
    it('warns that it continues on a new branch because the run is held, naming the holder only', async () => {
      const location = join(directory.path, stores[kind].location);
      const provider = stores[kind].make();
      providers.push(provider);
      const failing = toolUsingModel({
        failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Write'),
      });
      const { crew } = threeTaskCrew(failing, { checkpoint: { location, provider } });
      await crew.kickoff({ inputs: { topic: 'AI' } }).catch(() => undefined);
      const head = (await provider.list(location)).at(-1);
      const lease = await provider.claimLease!(location, {
        lineageId: head!.lineageId,
        owner: 'warning-test-holder',
        checkpointId: head!.id,
        holder: 'a worker of the warning test',
        ttlMs: 60_000,
      });
      try {
        const restored = await Crew.fromCheckpoint({
          restoreFrom: `${location}#${head!.id}`,
          location,
          provider,
          onConflict: 'fork',
        });
        restored.agents.forEach((agent) => {
          agent.llm = toolUsingModel();
        });
        await restored.kickoff();
        const warnings = records.filter((record) => record.message.includes('new branch'));
        expect(warnings).toHaveLength(1);
        const { message } = warnings[0]!;
        expect(message).toContain('a worker of the warning test');
        expect(message).toMatch(/continuing on a new branch, fork\//);
        expect(message).not.toMatch(/wait for it|fork instead|onConflict/);
        // One component prefix, put there by the logger: none inside the message.
        expect(message).not.toMatch(/\[(provider-|runtime)/);
        expect(restored.lastRun?.state.lineage.branch).toMatch(/^fork\//);
      } finally {
        await provider.releaseLease!(location, lease);
      }
    });
  },
);
