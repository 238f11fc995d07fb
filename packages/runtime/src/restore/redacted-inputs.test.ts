import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LogRecord, setLogSink } from '@crewline/events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { allFiles, checkpointFiles, readCheckpoint } from '../e2e/support/fixtures.js';
import { useTemporaryDirectory } from '../e2e/support/use-temporary-directory.js';
import { Flow, start } from '../flow/index.js';
import { type OfflineModel, offlineModel } from '../models/offline/offline-model.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { checkContinuation } from './check-continuation.js';
import { continueFromCheckpoint } from './continue-from-checkpoint.js';

// A key of no known shape (no `sk-` prefix, no `api_key=` before it): only its input's name, apiKey,
// says it is a credential. Each test plants its own, so that one registered by an earlier test (the
// registry is process-wide) cannot hide a leak.
let planted = 0;
function plantedKey(): string {
  planted += 1;
  return `wx-7Hq2Lm9Pz4Rt8Kd${planted}`;
}

const directory = useTemporaryDirectory();
const logs: LogRecord[] = [];

beforeEach(() => {
  logs.length = 0;
  setLogSink((record) => void logs.push(record));
});

afterEach(() => {
  setLogSink(null);
});

/** Every byte crewline wrote: the files under `location` and the log records. */
function expectWrittenNowhere(secret: string, location: string): void {
  const files = allFiles(location);
  expect(files.length).toBeGreaterThan(0);
  for (const file of files) {
    const bytes = readFileSync(join(location, file));
    expect(bytes.includes(Buffer.from(secret)), `the key is in ${file}`).toBe(false);
  }
  expect(JSON.stringify(logs)).not.toContain(secret);
}

/** A crew whose second task sends the key to the weather service; the first only plans. */
function weatherCrew(llm: OfflineModel, location: string): Crew {
  const caller = new Agent({ role: 'Caller', goal: 'Call the API', backstory: 'x', llm });
  return new Crew({
    agents: [caller],
    tasks: [
      new Task({ description: 'Plan the call for {city}', expectedOutput: 'ok', agent: caller }),
      new Task({
        description: 'Call the weather service with key {apiKey} for {city}',
        expectedOutput: 'ok',
        agent: caller,
      }),
    ],
    checkpoint: { location, onEvents: ['*'] },
  });
}

/** Runs the weather crew until its second task's model call fails: that task is left to run. */
async function interruptedBeforeTheCall(location: string, apiKey: string): Promise<void> {
  await weatherCrew(offlineModel({ failOn: [2] }), location)
    .kickoff({ inputs: { apiKey, city: 'Oslo' } })
    .catch(() => undefined);
  expect(readCheckpoint(checkpointFiles(location).at(-1)!).entities[0]!.kind).toBe('crew');
}

/** What the model was sent, all calls together. */
function sent(llm: OfflineModel): string {
  return JSON.stringify(llm.calls);
}

describe('a kickoff input redacted by its name', () => {
  it('is redacted by value wherever else it is written: the rendered task, the prompt, events', async () => {
    const apiKey = plantedKey();
    const location = join(directory.path, 'cp');
    const llm = offlineModel();
    const caller = new Agent({ role: 'Caller', goal: 'Call the API', backstory: 'x', llm });
    const crew = new Crew({
      agents: [caller],
      tasks: [
        new Task({
          description: 'Call the weather service with key {apiKey} for {city}',
          expectedOutput: 'ok',
          agent: caller,
        }),
      ],
      checkpoint: { location, onEvents: ['*'] },
    });
    await crew.kickoff({ inputs: { apiKey, city: 'Oslo' } });
    // The model is given the key: redaction changes what is written, never what is sent.
    expect(sent(llm)).toContain(`key ${apiKey} for Oslo`);
    expectWrittenNowhere(apiKey, location);
    const last = readFileSync(checkpointFiles(location).at(-1)!, 'utf8');
    expect(last).toContain('Call the weather service with key [REDACTED] for Oslo');
  });

  it('given by a flow method to the crew it kicks off, is redacted by value before the crew runs', async () => {
    const apiKey = plantedKey();
    const location = join(directory.path, 'flow');
    const llm = offlineModel();
    class WeatherFlow extends Flow<{ city: string }> {
      initialState = { city: 'Oslo' };
      @start() async call() {
        const caller = new Agent({ role: 'Caller', goal: 'Call the API', backstory: 'x', llm });
        const crew = new Crew({
          agents: [caller],
          tasks: [
            new Task({
              description: 'Call with key {apiKey} for {city}',
              expectedOutput: 'ok',
              agent: caller,
            }),
          ],
        });
        return (await crew.kickoff({ inputs: { apiKey, city: this.state.city } })).raw;
      }
    }
    await new WeatherFlow({ checkpoint: { location, onEvents: ['*'] } }).kickoff();
    expect(sent(llm)).toContain(`key ${apiKey} for Oslo`);
    expectWrittenNowhere(apiKey, location);
  });

  it('is left as it is when it is too short to be redacted by value without blanking words', async () => {
    const location = join(directory.path, 'short');
    const llm = offlineModel();
    const caller = new Agent({ role: 'Caller', goal: 'Call the API', backstory: 'x', llm });
    const crew = new Crew({
      agents: [caller],
      tasks: [new Task({ description: 'Greet {city} as {token}', expectedOutput: 'ok', agent: caller })],
      checkpoint: { location },
    });
    await crew.kickoff({ inputs: { token: 'Oslo', city: 'Oslo' } });
    const last = readCheckpoint(checkpointFiles(location).at(-1)!);
    expect(JSON.stringify(last.entities)).toContain('Greet Oslo as Oslo');
  });
});

describe('resuming a run whose pending task uses an input stored redacted', () => {
  it('kickoff({ fromCheckpoint }) without the input is refused before anything runs, naming it', async () => {
    const apiKey = plantedKey();
    const location = join(directory.path, 'cp');
    await interruptedBeforeTheCall(location, apiKey);
    const llm = offlineModel();
    const before = checkpointFiles(location).length;
    const error = await weatherCrew(llm, location)
      .kickoff({ fromCheckpoint: { restoreFrom: location } })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_argument' });
    const message = (error as Error).message;
    expect(message).toContain('"apiKey"');
    expect(message).toContain('inputs: { apiKey');
    expect(message).toContain('--input apiKey=<value>');
    expect(llm.calls).toHaveLength(0);
    expect(checkpointFiles(location)).toHaveLength(before);
  });

  it('with the input passed again, resumes: the task gets the key, no file holds it', async () => {
    const apiKey = plantedKey();
    const location = join(directory.path, 'cp');
    await interruptedBeforeTheCall(location, apiKey);
    const llm = offlineModel();
    const output = await weatherCrew(llm, location).kickoff({
      fromCheckpoint: { restoreFrom: location },
      inputs: { apiKey },
    });
    expect(output.tasksOutput).toHaveLength(2);
    // Only the pending task ran, with the key in its prompt.
    expect(llm.calls).toHaveLength(1);
    expect(sent(llm)).toContain(`key ${apiKey} for Oslo`);
    expect(sent(llm)).not.toContain('[REDACTED]');
    expectWrittenNowhere(apiKey, location);
  });

  it('a new value passed on the resume is redacted too', async () => {
    const location = join(directory.path, 'cp');
    await interruptedBeforeTheCall(location, plantedKey());
    const rotated = plantedKey();
    const llm = offlineModel();
    await weatherCrew(llm, location).kickoff({
      fromCheckpoint: { restoreFrom: location },
      inputs: { apiKey: rotated },
    });
    expect(sent(llm)).toContain(`key ${rotated} for Oslo`);
    expectWrittenNowhere(rotated, location);
  });

  it('Crew.fromCheckpoint then kickoff() is refused the same way', async () => {
    const location = join(directory.path, 'cp');
    await interruptedBeforeTheCall(location, plantedKey());
    const llm = offlineModel();
    const crew = await Crew.fromCheckpoint(
      { restoreFrom: location },
      { registry: new ProjectRegistry().register({ models: { 'offline:default': llm } }) },
    );
    const error = await crew.kickoff().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_argument' });
    expect((error as Error).message).toContain('"apiKey"');
    expect(llm.calls).toHaveLength(0);
  });

  // The refusal came after the crew had let go of the checkpoint it was restored from: the kickoff
  // the message asks for (the key passed again) then ran the crew from the start and paid again
  // for the task the checkpoint had finished.
  it('Crew.fromCheckpoint refused, then kickoff({ inputs }) on the same crew continues the checkpoint', async () => {
    const location = join(directory.path, 'cp');
    const apiKey = plantedKey();
    await interruptedBeforeTheCall(location, apiKey);
    const llm = offlineModel();
    const crew = await Crew.fromCheckpoint(
      { restoreFrom: location },
      { registry: new ProjectRegistry().register({ models: { 'offline:default': llm } }) },
    );
    await expect(crew.kickoff()).rejects.toMatchObject({ code: 'invalid_argument' });
    const output = await crew.kickoff({ inputs: { apiKey } });
    expect(output.tasksOutput).toHaveLength(2);
    expect(llm.calls).toHaveLength(1);
    expect(sent(llm)).toContain(`key ${apiKey} for Oslo`);
  });

  it('continueFromCheckpoint (the CLI and TUI path) refuses without the input, resumes with it', async () => {
    const apiKey = plantedKey();
    const location = join(directory.path, 'cp');
    await interruptedBeforeTheCall(location, apiKey);
    const llm = offlineModel();
    const registry = new ProjectRegistry().register({ models: { 'offline:default': llm } });
    const refused = await continueFromCheckpoint({ reference: location, mode: 'resume', registry }).catch(
      (caught: unknown) => caught,
    );
    expect(refused).toMatchObject({ code: 'invalid_argument' });
    expect((refused as Error).message).toContain('--input apiKey=<value>');
    const forked = await continueFromCheckpoint({ reference: location, mode: 'fork', registry }).catch(
      (caught: unknown) => caught,
    );
    expect(forked).toMatchObject({ code: 'invalid_argument' });
    expect(llm.calls).toHaveLength(0);
    const result = await continueFromCheckpoint({
      reference: location,
      mode: 'resume',
      registry,
      inputs: { apiKey },
    });
    expect(result.kind).toBe('crew');
    expect(sent(llm)).toContain(`key ${apiKey} for Oslo`);
    expectWrittenNowhere(apiKey, location);
  });

  it('checkContinuation (what the CLI asks before it says anything) refuses the same', async () => {
    const location = join(directory.path, 'cp');
    await interruptedBeforeTheCall(location, plantedKey());
    const document = readCheckpoint(checkpointFiles(location).at(-1)!);
    expect(() => checkContinuation(document, { mode: 'fork' })).toThrow(/"apiKey".*--input apiKey=<value>/);
    expect(() => checkContinuation(document, { mode: 'resume', inputs: { city: 'Bergen' } })).toThrow(
      /"apiKey"/,
    );
    expect(() =>
      checkContinuation(document, { mode: 'resume', inputs: { apiKey: plantedKey() } }),
    ).not.toThrow();
  });

  it('a standalone agent whose goal uses it is refused without it, and resumes with it', async () => {
    const apiKey = plantedKey();
    const location = join(directory.path, 'agent');
    const caller = (llm: OfflineModel) =>
      new Agent({
        role: 'Caller',
        goal: 'Call the weather service with key {apiKey}',
        backstory: 'x',
        llm,
        checkpoint: { location, onEvents: ['*'] },
      });
    await caller(offlineModel({ failOn: [1] }))
      .kickoff('Weather in Oslo?', { inputs: { apiKey } })
      .catch(() => undefined);
    const llm = offlineModel();
    const refused = await caller(llm)
      .kickoff(undefined, { fromCheckpoint: { restoreFrom: location } })
      .catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ code: 'invalid_argument' });
    expect((refused as Error).message).toContain('agent "Caller"');
    expect(llm.calls).toHaveLength(0);
    await caller(llm).kickoff(undefined, { fromCheckpoint: { restoreFrom: location }, inputs: { apiKey } });
    expect(sent(llm)).toContain(`key ${apiKey}`);
    expectWrittenNowhere(apiKey, location);
  });

  it('Agent.fromCheckpoint refused, then kickoff with the input on the same agent continues it', async () => {
    const apiKey = plantedKey();
    const location = join(directory.path, 'agent');
    await new Agent({
      role: 'Caller',
      goal: 'Call the weather service with key {apiKey}',
      backstory: 'x',
      llm: offlineModel({ failOn: [1] }),
      checkpoint: { location, onEvents: ['*'] },
    })
      .kickoff('Weather in Oslo?', { inputs: { apiKey } })
      .catch(() => undefined);
    const llm = offlineModel();
    const agent = await Agent.fromCheckpoint(
      { restoreFrom: location },
      { registry: new ProjectRegistry().register({ models: { 'offline:default': llm } }) },
    );
    await expect(agent.kickoff(undefined)).rejects.toMatchObject({ code: 'invalid_argument' });
    const restoredLineage = readCheckpoint(checkpointFiles(location).at(-1)!).metadata.lineageId;
    const before = checkpointFiles(location).length;
    await agent.kickoff(undefined, { inputs: { apiKey } });
    expect(llm.calls).toHaveLength(1);
    expect(sent(llm)).toContain(`key ${apiKey}`);
    // Continued on the checkpoint's run (its lineage), not on a new one cut off from it.
    const written = checkpointFiles(location).slice(before);
    expect(written.length).toBeGreaterThan(0);
    for (const file of written) expect(readCheckpoint(file).metadata.lineageId).toBe(restoredLineage);
  });

  it('an input stored redacted that no pending task uses is not asked for', async () => {
    const apiKey = plantedKey();
    const location = join(directory.path, 'cp');
    const crew = (llm: OfflineModel) => {
      const caller = new Agent({ role: 'Caller', goal: 'Call the API', backstory: 'x', llm });
      return new Crew({
        agents: [caller],
        tasks: [
          new Task({ description: 'Call with key {apiKey}', expectedOutput: 'ok', agent: caller }),
          new Task({ description: 'Report on {city}', expectedOutput: 'ok', agent: caller }),
        ],
        checkpoint: { location },
      });
    };
    await crew(offlineModel({ failOn: [2] }))
      .kickoff({ inputs: { apiKey, city: 'Oslo' } })
      .catch(() => undefined);
    const llm = offlineModel();
    await crew(llm).kickoff({ fromCheckpoint: { restoreFrom: location } });
    expect(llm.calls).toHaveLength(1);
    expect(sent(llm)).toContain('Report on Oslo');
  });
});
