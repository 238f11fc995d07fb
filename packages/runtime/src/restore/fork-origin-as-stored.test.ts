// A fork stores its origin checkpoint again beside its first write (runtime-state's ForkOrigin). A
// fork with edited task outputs (`taskOutputs`, the CLI's `--set-output`) stored the EDITED document
// under the origin's id: a checkpoint copied out of its location and forked wrote, into the location
// it names, an origin that said the run had produced the invented output (`edited: true`, later tasks
// reset), and a provider refusing another document under a stored id logged a warning at every such
// fork. The origin is stored as it was read; only the fork carries the edit.
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrewlineError, type LogRecord, setLogSink } from '@crewline/events';
import {
  type CheckpointDocument,
  type CheckpointSetting,
  type CheckpointWrite,
  type ProviderEntry,
  readDocument,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { providerRegistry } from '../checkpointing/provider-registry.js';
import { Crew } from '../crew/crew.js';
import {
  checkpointFiles,
  lookupTool,
  readCheckpoint,
  threeTaskCrew,
  toolUsingModel,
} from '../e2e/support/fixtures.js';
import { useTemporaryDirectory } from '../e2e/support/use-temporary-directory.js';
import { ProjectRegistry, registerProject } from '../project-config/project-config.js';
import { continueFromCheckpoint } from './continue-from-checkpoint.js';

const directory = useTemporaryDirectory();
let records: LogRecord[];

beforeEach(() => {
  records = [];
  setLogSink((record) => records.push(record));
});
afterEach(() => setLogSink(null));

// The scripted offline model is a custom model: like any, it is registered under the id stored.
const registry = () =>
  new ProjectRegistry().register({
    tools: { lookup: lookupTool },
    models: { 'offline:default': toolUsingModel() },
  });

/** A crew run that stops in its review task, checkpointed on every task_completed. */
async function interruptedRun(checkpoint: CheckpointSetting): Promise<void> {
  const failing = toolUsingModel({
    failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Review'),
  });
  const { crew } = threeTaskCrew(failing, { checkpoint });
  await crew.kickoff({ inputs: { topic: 'AI' } }).catch(() => undefined);
}

type SavedTask = { output?: { raw: string; edited?: boolean } | null };
const tasksOf = (document: CheckpointDocument) => document.entities[0]!.data.tasks as SavedTask[];

const originWarnings = () => records.filter((record) => record.message.includes('could not be stored again'));

describe('a fork with edited task outputs', () => {
  it('of a checkpoint file copied out of its location stores the origin where it writes, as it was read', async () => {
    const previousDirectory = process.cwd();
    // The fork of a loose file writes to the default location, relative (./.checkpoints).
    process.chdir(directory.path);
    try {
      await interruptedRun({ location: join(directory.path, 'cp') });
      const first = checkpointFiles(join(directory.path, 'cp'))[0]!; // research done
      const saved = join(directory.path, 'saved.json');
      copyFileSync(first, saved);

      const result = await continueFromCheckpoint({
        reference: saved,
        mode: 'fork',
        taskOutputs: { 0: 'EDITED OUTPUT' },
        registry: registry(),
      });

      const files = checkpointFiles(join(directory.path, '.checkpoints'));
      const forkFiles = files.filter((file) => file.includes('/fork/'));
      expect(forkFiles.length).toBeGreaterThan(0);
      const forked = readCheckpoint(forkFiles.at(-1)!);
      expect(forked.metadata.branch).toBe(result.branch);
      expect(tasksOf(forked)[0]!.output).toMatchObject({ raw: 'EDITED OUTPUT', edited: true });
      // The origin, stored again beside the fork's first write, is the checkpoint the run wrote.
      const original = readCheckpoint(saved);
      const origins = files.filter((file) => readCheckpoint(file).metadata.id === original.metadata.id);
      expect(origins).toHaveLength(1);
      expect(readFileSync(origins[0]!, 'utf8')).toBe(readFileSync(saved, 'utf8'));
      const origin = readCheckpoint(origins[0]!);
      expect(origin).toEqual(original);
      expect(tasksOf(origin)[0]!.output?.raw).not.toBe('EDITED OUTPUT');
      expect(tasksOf(origin)[0]!.output).not.toMatchObject({ edited: true });
      expect(originWarnings()).toEqual([]);
    } finally {
      process.chdir(previousDirectory);
    }
  });

  it('in a location refusing another document under a stored id: no warning, the origin unchanged', async () => {
    const provider = new ContentCheckingProvider();
    const providers = providerRegistry([strictEntry(provider)]);
    const location = 'strict://runs';
    await interruptedRun({ location, provider, providers });
    const first = (await provider.list(location))[0]!;
    const before = await readDocument(provider, location, first.id);

    const result = await continueFromCheckpoint({
      reference: first.reference,
      mode: 'fork',
      taskOutputs: { 0: 'EDITED OUTPUT' },
      registry: registry(),
      providers,
    });

    expect(originWarnings()).toEqual([]);
    expect(provider.refused).toEqual([]);
    expect(await readDocument(provider, location, first.id)).toEqual(before);
    const forked = await provider.list(location, { branch: result.branch });
    expect(forked.length).toBeGreaterThan(0);
    const last = await readDocument(provider, location, forked.at(-1)!.id);
    expect(tasksOf(last)[0]!.output).toMatchObject({ raw: 'EDITED OUTPUT', edited: true });
  });

  it('changed inputs of a fork do not reach its origin either', async () => {
    const provider = new ContentCheckingProvider();
    const providers = providerRegistry([strictEntry(provider)]);
    const location = 'strict://runs';
    await interruptedRun({ location, provider, providers });
    const first = (await provider.list(location))[0]!;
    const before = await readDocument(provider, location, first.id);

    await continueFromCheckpoint({
      reference: first.reference,
      mode: 'fork',
      inputs: { topic: 'robots' },
      registry: registry(),
      providers,
    });

    expect(originWarnings()).toEqual([]);
    expect(provider.refused).toEqual([]);
    expect(await readDocument(provider, location, first.id)).toEqual(before);
  });

  it("Crew.fork then setTaskOutput: the edit is the fork's, the origin stays as stored", async () => {
    registerProject({ tools: { lookup: lookupTool } });
    const provider = new ContentCheckingProvider();
    const providers = providerRegistry([strictEntry(provider)]);
    const location = 'strict://runs';
    await interruptedRun({ location, provider, providers });
    const first = (await provider.list(location))[0]!;
    const before = await readDocument(provider, location, first.id);

    const crew = await Crew.fork(
      { restoreFrom: first.reference, provider, providers },
      { branch: 'what-if' },
    );
    crew.agents.forEach((agent) => {
      agent.llm = toolUsingModel();
    });
    crew.setTaskOutput(0, 'EDITED OUTPUT');
    await crew.kickoff();

    expect(originWarnings()).toEqual([]);
    expect(provider.refused).toEqual([]);
    expect(await readDocument(provider, location, first.id)).toEqual(before);
    const forked = await provider.list(location, { branch: 'what-if' });
    const last = await readDocument(provider, location, forked.at(-1)!.id);
    expect(tasksOf(last)[0]!.output).toMatchObject({ raw: 'EDITED OUTPUT', edited: true });
  });
});

/**
 * An in-memory store that, like a database keyed by id with the document as its value, accepts a
 * checkpoint written again only when it is the very document it holds, and refuses another one under
 * that id with `conflict` (which the provider contract allows).
 */
class ContentCheckingProvider extends InMemoryProvider {
  readonly #contents = new Map<string, string>();
  readonly refused: string[] = [];

  override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const key = `${location}#${checkpoint.metadata.id}`;
    const { document } = checkpoint;
    const content = JSON.stringify({ inputs: document.inputs, entities: document.entities });
    const held = this.#contents.get(key);
    if (held !== undefined && held !== content) {
      this.refused.push(checkpoint.metadata.id);
      throw new CrewlineError(
        'provider-strict',
        'conflict',
        `checkpoint id "${checkpoint.metadata.id}" already exists in ${location} with other content`,
        { details: { duplicateId: checkpoint.metadata.id } },
      );
    }
    const stored = super.writeSync(location, checkpoint);
    this.#contents.set(key, content);
    return stored;
  }
}

/** The registry entry of {@link ContentCheckingProvider}: `strict://` locations, one shared store. */
function strictEntry(provider: ContentCheckingProvider): ProviderEntry {
  return {
    name: 'memory',
    claims: (reference) => reference.startsWith('strict://'),
    create: () => provider,
    storedOptions: () => ({}),
  };
}
