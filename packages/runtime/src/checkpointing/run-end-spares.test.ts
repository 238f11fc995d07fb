// A run on JSON leaves nothing behind in its location once kickoff returns: JsonProvider creates
// spare temp files ahead of the next writes (provider-json's spare-files.ts), and those made after a
// run's last write used to stay until the process ended — a user removing the location right after
// the run met ENOTEMPTY when one was still being created (it flaked a CI rehearsal twice), and a
// long-lived process kept empty `.spare.*.tmp` files in every location a run had finished in.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { Task } from '../task/task.js';
import { lookupFirst, lookupTool } from './test-support/lookup-run.js';

let directory: { path: string; cleanup: () => void };
beforeEach(() => {
  directory = temporaryDirectory('crewline-run-end-spares-');
});
afterEach(() => directory.cleanup());

const sparesUnder = (location: string) =>
  (readdirSync(location, { recursive: true }) as string[]).filter((entry) => entry.includes('.spare.'));

/** A crew of two tasks whose agent looks the subject up first: the crew's checkpoint setting, or the agent's. */
function crewOn(location: string, provider: JsonProvider, settingOf: 'crew' | 'agent' = 'crew'): Crew {
  const checkpoint = { provider, location, onEvents: ['*' as const] };
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research',
    backstory: 'B',
    llm: lookupFirst(),
    tools: [lookupTool()],
    ...(settingOf === 'agent' ? { checkpoint } : {}),
  });
  return new Crew({
    tasks: [
      new Task({ description: 'research tides', expectedOutput: 'notes', agent: researcher }),
      new Task({ description: 'write about tides', expectedOutput: 'a text', agent: researcher }),
    ],
    ...(settingOf === 'crew' ? { checkpoint } : {}),
  });
}

describe('the end of a run on JSON', () => {
  // A review: the spares were removed as the run released its lease, and a run with no checkpoint
  // setting of its own (only its agents have one) holds no lease.
  it('leaves no spare temp file where only its agents checkpoint (a run that holds no lease)', async () => {
    const location = join(directory.path, 'cp');
    const provider = new JsonProvider();
    for (let round = 0; round < 3; round += 1) {
      await crewOn(location, provider, 'agent').kickoff();
      expect((await provider.list(location)).length).toBeGreaterThan(0);
      expect(sparesUnder(location)).toEqual([]);
      rmSync(location, { recursive: true });
    }
    await provider.close();
  });

  it('leaves no spare temp file in its location, so the location can be removed at once', async () => {
    const location = join(directory.path, 'cp');
    const provider = new JsonProvider();
    for (let round = 0; round < 5; round += 1) {
      await crewOn(location, provider).kickoff();
      expect(sparesUnder(location)).toEqual([]);
      // No retries: nothing is being created in it any more.
      rmSync(location, { recursive: true });
    }
    await provider.close();
  });

  it('a second run in the same location still writes every checkpoint (spares are made again)', async () => {
    const location = join(directory.path, 'cp');
    const provider = new JsonProvider();
    await crewOn(location, provider).kickoff();
    const first = (await provider.list(location)).length;
    await crewOn(location, provider).kickoff();
    expect((await provider.list(location)).length).toBe(2 * first);
    expect(sparesUnder(location)).toEqual([]);
    await provider.close();
  });
});
