// Where restores read from and where restored and forked runs write: forks never onto a branch that
// already has checkpoints, the provider a location calls for, the provider a restore config names.
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrewlineError, EventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { type CheckpointProvider, LazyProvider, readDocument, readyProvider } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import {
  checkpointFiles,
  lookupTool,
  offlineModel,
  readCheckpoint,
  temporaryDirectory,
  threeTaskCrew,
  toolUsingModel,
} from '../e2e/support/fixtures.js';
import { CycleFlow } from '../flow/test-support/scenarios.js';
import { registerProject } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { resolveCheckpointChain } from './checkpoint-setting.js';

let directory: { path: string; cleanup: () => void };
let previousDirectory: string;
const providers: CheckpointProvider[] = [];

beforeEach(() => {
  // Restored crews find their custom tool by name, as crewline.config.ts would register it.
  registerProject({ tools: { lookup: lookupTool } });
  directory = temporaryDirectory();
  previousDirectory = process.cwd();
  // The default location is relative (./.checkpoints): each test gets its own folder.
  process.chdir(directory.path);
});

afterEach(async () => {
  for (const provider of providers.splice(0)) await provider.close?.();
  process.chdir(previousDirectory);
  directory.cleanup();
});

/** A crew whose write task fails: its checkpoints stop after the research task. */
function interruptedCrew(checkpoint: Crew['checkpoint']) {
  const failing = toolUsingModel({
    failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Write'),
  });
  return threeTaskCrew(failing, { checkpoint }).crew;
}

function conflictMessage(branch: string, location: string): string {
  // Library wording: a code user has no `--branch` flag to pass (the CLI says that one itself).
  return `[runtime] branch "${branch}" already exists in ${location}; fork onto another branch (the \`branch\` option) or leave it out to generate one`;
}

describe('a fork onto a branch that already has checkpoints', () => {
  it('is refused before the fork writes anything: the original branch keeps every checkpoint', async () => {
    const location = join(directory.path, 'cp');
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location, maxCheckpoints: 2 } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const before = checkpointFiles(location);
    expect(before).toHaveLength(2);
    const forked = await Crew.fork({ restoreFrom: before[0]! }, { branch: 'main' });
    const refused = forked.kickoff();
    await expect(refused).rejects.toMatchObject({
      code: 'conflict',
      message: conflictMessage('main', location),
    });
    expect(CrewlineError.isInstance(await refused.catch((error: unknown) => error))).toBe(true);
    // The fork's parent (before[0]) and its sibling are still there: nothing was written or pruned.
    expect(checkpointFiles(location)).toEqual(before);
  });

  it('running a fork twice with the same branch name is refused the second time', async () => {
    const location = join(directory.path, 'cp');
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const [first] = checkpointFiles(location);
    await (await Crew.fork({ restoreFrom: first! }, { branch: 'what-if' })).kickoff();
    const whatIf = checkpointFiles(join(location, 'what-if'));
    expect(whatIf.length).toBeGreaterThan(0);
    const again = await Crew.fork({ restoreFrom: first! }, { branch: 'what-if' });
    await expect(again.kickoff()).rejects.toMatchObject({
      code: 'conflict',
      message: conflictMessage('what-if', location),
    });
    expect(checkpointFiles(join(location, 'what-if'))).toEqual(whatIf);
    // Without a name, every fork gets a branch of its own.
    await (await Crew.fork({ restoreFrom: first! })).kickoff();
    await (await Crew.fork({ restoreFrom: first! })).kickoff();
    expect(
      new Set(checkpointFiles(join(location, 'fork')).map((file) => readCheckpoint(file).metadata.branch))
        .size,
    ).toBe(2);
  });

  it('Agent.fork, Flow.fork and continueFromCheckpoint refuse it too', async () => {
    const agentLocation = join(directory.path, 'agent');
    const agent = new Agent({
      role: 'Researcher',
      goal: 'Research',
      backstory: 'Expert',
      llm: offlineModel(),
      checkpoint: { location: agentLocation, onEvents: ['llm_call_completed'] },
    });
    await agent.kickoff('Research AI');
    const agentFork = await Agent.fork({ restoreFrom: agentLocation }, { branch: 'main' });
    await expect(agentFork.kickoff()).rejects.toMatchObject({
      code: 'conflict',
      message: conflictMessage('main', agentLocation),
    });

    const provider = new InMemoryProvider();
    await new CycleFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const [flowCheckpoint] = await provider.list('mem');
    const flowFork = await CycleFlow.fork(
      { restoreFrom: `mem#${flowCheckpoint!.id}`, provider },
      { branch: 'main', bus: new EventBus() },
    );
    await expect(flowFork.kickoff()).rejects.toMatchObject({
      code: 'conflict',
      message: conflictMessage('main', 'mem'),
    });

    const crewLocation = join(directory.path, 'crew');
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location: crewLocation } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const before = checkpointFiles(crewLocation);
    await expect(
      continueFromCheckpoint({ reference: before[0]!, mode: 'fork', branch: 'main' }),
    ).rejects.toMatchObject({ code: 'conflict', message: conflictMessage('main', crewLocation) });
    expect(checkpointFiles(crewLocation)).toEqual(before);
  });
});

describe('the provider a location calls for, when the config names none', () => {
  it('a .db or .sqlite location is a SQLite database, which restores', async () => {
    for (const name of ['runs.db', 'runs.sqlite']) {
      const location = join(directory.path, name);
      await interruptedCrew({ location })
        .kickoff({ inputs: { topic: 'AI' } })
        .catch(() => undefined);
      expect(readFileSync(location).subarray(0, 16).toString('latin1')).toBe('SQLite format 3\u0000');
      const restored = await Crew.fromCheckpoint({ restoreFrom: location });
      const output = await restored.kickoff();
      expect(output.tasksOutput).toHaveLength(3);
      const reader = new SqliteProvider();
      providers.push(reader);
      expect((await reader.latest(location))?.entities[0]).toMatchObject({
        status: 'completed',
        completed: 3,
      });
    }
  });

  it('a Postgres URL is the Postgres provider, imported on first use like SQLite', async () => {
    const location = 'postgres://crew:hunter2@127.0.0.1:1/runs';
    const config = resolveCheckpointChain([{ location }])!;
    expect(config.provider).toBeInstanceOf(LazyProvider);
    const provider = await readyProvider(config.provider!);
    providers.push(provider);
    expect(provider.kind).toBe('postgres');
    expect(provider.capabilities.leases).toBe(true);
    // Nothing listens there: the kickoff fails on the connection, not for want of a provider, and
    // the password stays out of the error.
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    const failure = await crew.kickoff({ inputs: { topic: 'AI' } }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toMatchObject({ code: 'provider_unavailable' });
    expect(String((failure as Error).message)).not.toContain('hunter2');
  });

  it('a provider package that cannot be loaded fails the kickoff with provider_unavailable', async () => {
    const missing = new CrewlineError(
      'runtime',
      'provider_unavailable',
      '@crewline/provider-sqlite could not be loaded; install it next to @crewline/runtime',
    );
    const lazy = new LazyProvider(
      'sqlite',
      () => Promise.reject(missing),
      () => undefined,
    );
    const { crew } = threeTaskCrew(toolUsingModel(), {
      checkpoint: { location: join(directory.path, 'runs.db'), provider: lazy },
    });
    await expect(crew.kickoff({ inputs: { topic: 'AI' } })).rejects.toBe(missing);
  });
});

describe('the provider a restore config names', () => {
  it('reads the reference with it: an InMemoryProvider run resumes', async () => {
    const provider = new InMemoryProvider();
    await interruptedCrew({ location: 'mem-runs', provider })
      .kickoff({ inputs: { topic: 'AI' } })
      .catch(() => undefined);
    const [saved] = await provider.list('mem-runs');
    const restored = await Crew.fromCheckpoint({ restoreFrom: 'mem-runs', provider });
    expect((await restored.kickoff()).tasksOutput).toHaveLength(3);
    const byId = await Crew.fromCheckpoint({ restoreFrom: `mem-runs#${saved!.id}`, provider });
    expect(byId.checkpointBranch).toBe('main');
    const written = await provider.list('mem-runs');
    expect(written.length).toBeGreaterThan(1);
    expect(written[1]!.parentId).toBe(saved!.id);
  });

  it('keeps the SqliteProvider instance it names, and the options a configured provider had', async () => {
    const location = join(directory.path, 'runs.db');
    const original = new SqliteProvider({ synchronous: 'full' });
    providers.push(original);
    await interruptedCrew({ location, provider: original })
      .kickoff({ inputs: { topic: 'AI' } })
      .catch(() => undefined);

    const given = new SqliteProvider({ synchronous: 'full', busyTimeoutMs: 1234 });
    providers.push(given);
    const latest = vi.spyOn(given, 'latest');
    // Automatic checkpoints are committed inside their events (writeSync), or in groups
    // (writeBatch) with `groupCommit`, or alone (write).
    const groups = vi.spyOn(given, 'writeBatch');
    const singles = vi.spyOn(given, 'write');
    const inEvents = vi.spyOn(given, 'writeSync');
    const restored = await Crew.fromCheckpoint({ restoreFrom: location, provider: given });
    expect(latest).toHaveBeenCalled();
    await restored.kickoff();
    expect(groups.mock.calls.length + singles.mock.calls.length + inEvents.mock.calls.length).toBeGreaterThan(
      0,
    );

    // Without a provider in the restore config, the crew's own provider is rebuilt with its options.
    const rebuilt = await Crew.fromCheckpoint({ restoreFrom: location });
    const provider = (rebuilt.checkpoint as { provider?: SqliteProvider }).provider;
    providers.push(provider!);
    expect(provider?.options.synchronous).toBe('full');
  });

  it('a renamed copy of a JSON checkpoint file is restored by its path and the run writes to the default location', async () => {
    const location = join(directory.path, 'cp');
    await interruptedCrew({ location })
      .kickoff({ inputs: { topic: 'AI' } })
      .catch(() => undefined);
    const [file] = checkpointFiles(location);
    copyFileSync(file!, join(directory.path, 'saved.json'));
    const restored = await Crew.fromCheckpoint({ restoreFrom: 'saved.json' });
    await restored.kickoff();
    const written = checkpointFiles('.checkpoints');
    expect(written.length).toBeGreaterThan(0);
    expect(readCheckpoint(written[0]!).metadata.parentId).toBe(readCheckpoint(file!).metadata.id);
  });
});

describe('entity summaries', () => {
  it("a crew's last checkpoint, taken at its last task_completed, shows it completed", async () => {
    const provider = new InMemoryProvider();
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location: 'mem', provider } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const latest = await provider.latest('mem');
    expect(latest?.entities[0]).toMatchObject({ status: 'completed', completed: 3, total: 3 });
    const earlier = (await provider.list('mem'))[0]!;
    expect(earlier.entities[0]).toMatchObject({ status: 'running', completed: 1 });
    expect((await readDocument(provider, 'mem', latest!.id)).entities[0]!.kind).toBe('crew');
  });
});
