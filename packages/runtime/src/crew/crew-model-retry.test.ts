// Found by a review: the kickoff-time model check throws after the kickoff consumed the crew's pending restore,
// so a retry on the same restored crew (key now set) starts over and pays for finished tasks again.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lookupTool, threeTaskCrew, toolUsingModel } from '../e2e/support/fixtures.js';
import { useTemporaryDirectory } from '../e2e/support/use-temporary-directory.js';
import { ProjectRegistry, projectRegistry } from '../project-config/project-config.js';
import { Crew } from './crew.js';

const directory = useTemporaryDirectory();
const id = 'openai:gpt-4o-mini';
let savedKey: string | undefined;
beforeEach(() => {
  savedKey = process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_API_KEY;
});
afterEach(() => {
  if (savedKey !== undefined) process.env.OPENAI_API_KEY = savedKey;
  delete projectRegistry().models[id];
});

/** A crew run on the model `id` that failed in its review task, restored from its checkpoints. */
async function restoredAfterFailure(location: string): Promise<Crew> {
  projectRegistry().models[id] = toolUsingModel({
    failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Review'),
  });
  const { crew } = threeTaskCrew(id, { checkpoint: { location } });
  await crew.kickoff({ inputs: { topic: 'AI' } }).catch(() => undefined);
  delete projectRegistry().models[id];
  return Crew.fromCheckpoint(
    { restoreFrom: location },
    { registry: new ProjectRegistry().register({ tools: { lookup: lookupTool } }) },
  );
}

/** Registers a working model under `id`; returns how many calls it has answered so far. */
function registerCountingModel(): () => number {
  let calls = 0;
  const counting = toolUsingModel();
  const original = counting.doGenerate.bind(counting);
  counting.doGenerate = (async (options: never) => {
    calls += 1;
    return original(options);
  }) as typeof counting.doGenerate;
  projectRegistry().models[id] = counting;
  return () => calls;
}

describe('a kickoff refused for a model that cannot be built', () => {
  it('a restored crew retried after a missing-key failure still continues its checkpoint', async () => {
    const restored = await restoredAfterFailure(join(directory.path, 'cp'));
    await expect(restored.kickoff()).rejects.toThrow('OPENAI_API_KEY');
    // The user fixes the model (here: registers it) and retries the same object.
    const calls = registerCountingModel();
    await restored.kickoff();
    // Continuing runs the review task only (2 calls with its tool step); starting over runs all 3.
    expect(restored.lastCheckpoint?.parentId).not.toBeNull();
    expect(calls()).toBeLessThanOrEqual(2);
  });

  it('the same restored crew with the model there from the start continues the same way', async () => {
    const restored = await restoredAfterFailure(join(directory.path, 'cp2'));
    const calls = registerCountingModel();
    await restored.kickoff();
    expect(calls()).toBeLessThanOrEqual(2);
  });
});
