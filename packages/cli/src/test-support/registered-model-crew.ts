import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { providerOf } from './fixtures.js';

/** The id the registered model is stored under: not `offline:`, so its calls cost money unless priced. */
export const registeredModelId = 'acme:house-model';

export interface RegisteredModelRun {
  location: string;
  /** Checkpoints of the run, oldest first (one per completed task). */
  checkpoints: StoredCheckpoint[];
}

/**
 * A model of another provider (`acme`), answered by the offline model so no network is needed: cost
 * reports recognise the offline model by its provider, so this one costs money unless priced.
 */
function houseModel(): ReturnType<typeof offlineModel> {
  const inner = offlineModel({ name: 'house-model' });
  return Object.assign(Object.create(inner) as typeof inner, { provider: 'acme' });
}

/**
 * Runs a two-task crew in `directory` (JSON checkpoints on `task_completed`): the researcher on a
 * model registered as {@link registeredModelId} (the offline model behind it, so no network), the
 * writer on `offline:helper`. A run that mixes a model that costs money with one that does not.
 */
export async function writeRegisteredModelRun(directory: string): Promise<RegisteredModelRun> {
  registerProject({ models: { [registeredModelId]: houseModel } });
  const location = join(directory, '.checkpoints');
  const provider = await providerOf('json');
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Careful',
    llm: registeredModelId,
  });
  const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Clear', llm: 'offline:helper' });
  const crew = new Crew({
    name: 'Priced crew',
    agents: [researcher, writer],
    tasks: [
      new Task({
        name: 'research',
        description: 'Research {topic}',
        expectedOutput: 'Bullets',
        agent: researcher,
      }),
      new Task({ name: 'write', description: 'Write it up', expectedOutput: 'A paragraph', agent: writer }),
    ],
    checkpoint: { location, provider, onEvents: ['task_completed'] },
  });
  await crew.kickoff({ inputs: { topic: 'tide pools' } });
  const checkpoints = await provider.list(provider.resolveLocation(location));
  await provider.close?.();
  return { location, checkpoints };
}

/** Writes a crewline.config.mjs in `directory` that prices {@link registeredModelId} (no imports needed). */
export async function writePriceConfig(
  directory: string,
  price: { inputPerMillion: number; outputPerMillion: number },
): Promise<void> {
  await writeFile(
    join(directory, 'crewline.config.mjs'),
    `export default { modelPrices: { ${JSON.stringify(registeredModelId)}: ${JSON.stringify(price)} } };\n`,
  );
}
