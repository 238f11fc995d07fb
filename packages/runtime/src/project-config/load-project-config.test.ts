import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError, type LogRecord, setLogSink } from '@crewline/events';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProjectConfig } from './load-project-config.js';

const directories: string[] = [];

function projectWith(config: string, name = 'crewline.config.mjs'): string {
  // Outside the workspace, so no crewline package resolves from it: a user's fresh directory.
  const directory = mkdtempSync(join(tmpdir(), 'crewline-config-'));
  directories.push(directory);
  writeFileSync(join(directory, name), config);
  return directory;
}

afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('loadProjectConfig errors', () => {
  it('names the package a config imports that is not installed, and says to install it there', async () => {
    const cwd = projectWith(
      "import { defineConfig } from '@crewline/runtime';\nexport default defineConfig({});\n",
    );
    const error = await loadProjectConfig({ cwd, register: false }).catch((thrown: unknown) => thrown);
    expect((error as Error).message).toContain(
      `imports @crewline/runtime, which is not installed where the config lives (${cwd})`,
    );
    expect((error as Error).message).toContain(
      'install @crewline/runtime (and @crewline/worker, for runs) there',
    );
    expect((error as Error).message).not.toContain('TypeScript loader');
  });

  it('says which file a relative import of the config misses', async () => {
    const cwd = projectWith("export { default } from './crews.mjs';\n");
    const error = await loadProjectConfig({ cwd, register: false }).catch((thrown: unknown) => thrown);
    expect((error as Error).message).toMatch(/imports \.\/crews\.mjs, which does not exist/);
  });
});

describe('loadProjectConfig validates what the file exports', () => {
  it('refuses a wrong kind of value with path: message lines naming the file', async () => {
    const cases: [string, RegExp][] = [
      [
        'export default { models: 5 };\n',
        /crewline\.config\.mjs: models: must be an object of models by id, not a number$/,
      ],
      [
        'export default { tools: { lookup: 3 }, flows: [], classes: "Money" };\n',
        /crewline\.config\.mjs: tools\.lookup: is not a tool; use defineTool\(\{\.\.\.\}\); flows: must be an object of Flow subclasses by name, not an array; classes: must be an array of classes/,
      ],
      [
        'export default { modelPrices: { "openai:gpt-4o": { inputPerMillion: -1, outputPerMillion: 1 } } };\n',
        /crewline\.config\.mjs: modelPrices is not valid \(openai:gpt-4o\.inputPerMillion: must not be negative\)/,
      ],
      [
        'export default 5;\n',
        /crewline\.config\.mjs must be an object from defineConfig\(\{\.\.\.\}\), not a number/,
      ],
      ['export const unrelated = 1;\n', /has no default export/],
    ];
    for (const [source, message] of cases) {
      const cwd = projectWith(source);
      const error = await loadProjectConfig({ cwd, register: false }).catch((thrown: unknown) => thrown);
      expect(CrewlineError.hasCode(error, 'invalid_config'), String(error)).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('lets keys of other packages through (runs, for crewline worker)', async () => {
    const cwd = projectWith('export default { models: {}, runs: { crews: {} } };\n');
    await expect(loadProjectConfig({ cwd, register: false })).resolves.toMatchObject({ runs: { crews: {} } });
  });

  it('warns of a key no package reads, with the known key it was probably meant to be', async () => {
    // A typo like `modles` left the project's models unregistered without a word.
    const records: LogRecord[] = [];
    setLogSink((record) => void records.push(record));
    try {
      const cwd = projectWith('export default { modles: {}, runs: {}, colour: 1 };\n');
      await loadProjectConfig({ cwd, register: false });
    } finally {
      setLogSink(null);
    }
    const messages = records.map((record) => record.message);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/crewline\.config\.mjs: unknown key "modles" — did you mean "models"\?/);
    expect(messages[1]).toMatch(/unknown key "colour" \(known: tools, models/);
  });

  // The trial: a typo was warned of twice, with the file's name and then as "project config".
  it('warns of an unknown key once when the config is registered too, with the file name', async () => {
    const records: LogRecord[] = [];
    setLogSink((record) => void records.push(record));
    try {
      const cwd = projectWith('export default { modles: {} };\n');
      await loadProjectConfig({ cwd });
    } finally {
      setLogSink(null);
    }
    const messages = records.map((record) => record.message);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/crewline\.config\.mjs: unknown key "modles" — did you mean "models"\?/);
  });
});
