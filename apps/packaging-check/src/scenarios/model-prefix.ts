import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { CheckContext } from '../support/context.js';
import { startFakeOpenAIServer } from '../support/fake-openai-server.js';
import { checkpointIds, runtimeAndCli, twoTaskScript } from '../support/user-scripts.js';

// A key and a header only the provider made in crewline.config.ts sends: neither may reach a
// checkpoint, so a restored run that sends them got its model from the config's registry.
const apiKey = 'sk-packaging-check-not-a-real-key';
const servedBy = 'crewline.config.ts of the packaging check';

function projectConfig(baseURL: string): string {
  return `import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { defineConfig } from '@crewline/runtime';

export default defineConfig({
  modelProviders: {
    myprefix: createOpenAICompatible({
      name: 'myprefix',
      baseURL: ${JSON.stringify(baseURL)},
      apiKey: ${JSON.stringify(apiKey)},
      headers: { 'x-served-by': ${JSON.stringify(servedBy)} },
    }),
  },
});
`;
}

const runScript = twoTaskScript({
  imports: ['registerProject'],
  setup: 'registerProject(config);',
  llm: 'myprefix:fake-model',
  crewName: 'Model prefix crew',
  checkpoint: 'true',
  after: 'console.log(result.raw);',
});
/** Every checkpoint file's text under `directory`, recursively. */
async function checkpointTexts(directory: string): Promise<string[]> {
  const files = await readdir(directory, { recursive: true, withFileTypes: true });
  return Promise.all(
    files
      .filter((file) => file.isFile() && file.name.endsWith('.json'))
      .map((file) => readFile(join(file.parentPath, file.name), 'utf8')),
  );
}

/**
 * A model prefix of the user's own: `crewline.config.ts` registers `myprefix` as an
 * `@ai-sdk/openai-compatible` provider (installed from the registry, as the runtime's optional peer)
 * pointed at a fake OpenAI-compatible server on 127.0.0.1; a crew run with `myprefix:fake-model`
 * calls it, its checkpoints store the id and never the key; the installed `crewline checkpoint
 * resume` and `fork` rebuild the model through the config's registry and call the server again —
 * with the key and header that only the config's provider sends.
 */
export async function registeredModelPrefix(context: CheckContext): Promise<void> {
  const server = await startFakeOpenAIServer();
  try {
    const project = await context.project('model-prefix');
    await project.install([...context.tarballs(...runtimeAndCli), '@ai-sdk/openai-compatible@^2']);
    await project.write('crewline.config.ts', projectConfig(server.baseURL));
    await project.write('run.ts', runScript);

    const run = await project.bin('jiti', ['run.ts']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('[fake server] answer 2 from fake-model');
    expect(server.requests.map((request) => request.model)).toEqual(['fake-model', 'fake-model']);

    const texts = await checkpointTexts(join(project.directory, '.checkpoints'));
    expect(texts.length).toBeGreaterThanOrEqual(2);
    for (const text of texts) {
      const document = JSON.parse(text) as { entities: { data: { agents: { llm: unknown }[] } }[] };
      expect(document.entities[0]!.data.agents[0]!.llm).toBe('myprefix:fake-model');
      expect(text).not.toContain(apiKey);
      expect(text).not.toContain(servedBy);
    }

    const list = await project.bin('crewline', ['checkpoint', 'list']);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    const ids = checkpointIds(list.stdout);
    expect(ids).toHaveLength(2);
    // The checkpoint after the first task: resuming or forking it runs the second task's model call.
    const first = [...ids].sort()[0]!;

    for (const [command, extra] of [
      ['resume', []],
      ['fork', ['--branch', 'other-model-run']],
    ] as const) {
      const before = server.requests.length;
      const continued = await project.bin('crewline', ['checkpoint', command, first, ...extra]);
      expect(continued.code, `${continued.stdout}\n${continued.stderr}`).toBe(0);
      expect(continued.stdout).toContain('Polish the draft');
      const made = server.requests.slice(before);
      expect(made, `crewline checkpoint ${command} called the fake server`).toHaveLength(1);
      expect(made[0]!.model).toBe('fake-model');
      expect(made[0]!.prompt).toContain('Polish the draft');
      expect(made[0]!.headers['x-served-by']).toBe(servedBy);
      expect(made[0]!.headers.authorization).toBe(`Bearer ${apiKey}`);
      expect(continued.stdout).toContain(`[fake server] answer ${before + 1} from fake-model`);
    }
  } finally {
    await server.close();
  }
}
