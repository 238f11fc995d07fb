// A standalone agent whose saved request holds its credential as [REDACTED], resumed and forked the
// way the CLI, the TUI and the worker do (continueFromCheckpoint, which gives no messages) with the
// credential given again (review RJ-1: refused, and without the credential refused too when a template
// reads it, so such a checkpoint could be neither resumed nor forked).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REDACTED, setLogSink } from '@crewline/events';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTemporaryDirectory } from '../e2e/support/use-temporary-directory.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { defineTool } from '../tools/define-tool.js';
import { Agent } from './agent.js';

const directory = useTemporaryDirectory();
afterEach(() => setLogSink(null));
const apiKey = 'wx-9Kq2Lm9Pz4Rt8Kd1';
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a subject up',
  inputSchema: z.object({ query: z.string() }),
  execute: ({ query }) => `3 facts on ${query}`,
});

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(folder, entry.name)) : [join(folder, entry.name)],
  );
}

describe('an agent whose goal reads the credential and whose request held it', () => {
  it('resumes and forks with the credential given again, paying no saved call again', async () => {
    setLogSink(() => {});
    const location = join(directory.path, 'checkpoints');
    const model = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }] });
    await new Agent({
      role: 'Researcher',
      goal: 'Research {topic} with key {apiKey}',
      backstory: 'Calm',
      llm: model,
      tools: [lookup],
      checkpoint: { location, onEvents: ['tool_usage_started'] },
    }).kickoff(`Research kelp; the service key is ${apiKey}`, { inputs: { apiKey, topic: 'kelp' } });
    expect(filesUnder(location).some((file) => readFileSync(file, 'utf8').includes(REDACTED))).toBe(true);
    for (const mode of ['resume', 'fork'] as const) {
      const llm = offlineModel();
      const registry = new ProjectRegistry().register({
        models: { 'offline:default': llm },
        tools: { lookup },
      });
      await continueFromCheckpoint({ reference: location, mode, registry, inputs: { apiKey } });
      // The tool runs, then one call for the answer, its system prompt holding the real key.
      expect(llm.calls, mode).toHaveLength(1);
      expect(llm.calls[0]!.system, mode).toContain(apiKey);
    }
  });
});
