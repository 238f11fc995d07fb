import { join } from 'node:path';
import { Agent, Crew, Task } from '@crewline/runtime';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContinuationPlan } from '../core/continuation-plan.js';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import type { CheckpointDetail } from './checkpoint-detail.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

// Shaped like an OpenAI key, so redaction recognizes it by pattern as well as by the input's name.
const plantedKey = `sk-proj-${'Q7'.repeat(24)}`;

describe('a checkpoint taken in the middle of a task, in the explorer', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let explorer: RunningExplorer;
  let checkpoints: StoredCheckpoint[];
  let location: string;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-serve-detail-');
    location = join(project.path, '.checkpoints');
    const provider = await providerOf('json');
    const researcher = new Agent({
      role: 'Researcher',
      goal: 'Research {topic}',
      backstory: 'Careful',
      llm: 'offline:detail-test',
    });
    const crew = new Crew({
      name: 'Mid-task crew',
      agents: [researcher],
      tasks: [
        new Task({
          name: 'research',
          description: 'Research {topic}',
          expectedOutput: 'Bullets',
          agent: researcher,
        }),
      ],
      // After the model answers and before the task completes: the task is in progress, with its conversation.
      checkpoint: { location, provider, onEvents: ['llm_call_completed', 'task_completed'] },
    });
    await crew.kickoff({ inputs: { topic: 'tide pools', apiKey: plantedKey } });
    checkpoints = await provider.list(provider.resolveLocation(location));
    await provider.close?.();
    explorer = await startExplorer({
      opened: await openLocation(location, project.path, registry),
      providers: registry,
      cwd: project.path,
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await registry.close();
    await project?.remove();
  });

  const get = async (path: string) => {
    const response = await fetch(`http://127.0.0.1:${explorer.port}${path}`, {
      headers: { 'x-crewline-token': explorer.token },
    });
    return { status: response.status, text: await response.text() };
  };

  it('shows the conversation of the task in progress and the tokens it has used so far', async () => {
    const midTask = checkpoints.find((checkpoint) => checkpoint.trigger === 'llm_call_completed')!;
    const { status, text } = await get(`/api/checkpoints/${midTask.id}`);
    expect(status).toBe(200);
    const detail = JSON.parse(text) as CheckpointDetail;
    const task = detail.entities[0]!.tasks[0]!;
    expect(task.status).toBe('running');
    expect(task.output).toBeUndefined();
    expect(task.conversation!.llmCalls).toBe(1);
    const roles = task.conversation!.messages.map((message) => message.role);
    expect(roles).toContain('user');
    expect(roles.at(-1)).toBe('assistant');
    expect(task.conversation!.messages.find((message) => message.role === 'user')!.text).toContain(
      'tide pools',
    );
    expect(task.conversation!.usage.totalTokens).toBeGreaterThan(0);
    // The tokens already spent count in the checkpoint's total.
    expect(detail.usage.totalTokens).toBe(task.conversation!.usage.totalTokens);
    const done = JSON.parse(
      (
        await get(
          `/api/checkpoints/${checkpoints.find((checkpoint) => checkpoint.trigger === 'task_completed')!.id}`,
        )
      ).text,
    ) as CheckpointDetail;
    expect(done.entities[0]!.tasks[0]!.conversation).toBeUndefined();
    expect(done.entities[0]!.tasks[0]!.output).toContain('tide pools');
  });

  it('says an offline model costs nothing', async () => {
    const last = checkpoints.at(-1)!;
    const detail = JSON.parse((await get(`/api/checkpoints/${last.id}`)).text) as CheckpointDetail;
    expect(detail.cost).toMatchObject({
      status: 'offline',
      usd: 0,
      unpriced: [],
      note: '$0 (offline model)',
    });
    expect(detail.cost.models.map((model) => model.model)).toEqual(['offline:detail-test']);
    expect(detail.usage.totalTokens).toBeGreaterThan(0);
  });

  it('gives each event of the timeline whole, redacted, and refuses an event that is not there', async () => {
    const last = checkpoints.at(-1)!;
    const detail = JSON.parse((await get(`/api/checkpoints/${last.id}`)).text) as CheckpointDetail;
    const kickoff = detail.events.find((event) => event.type === 'crew_kickoff_started')!;
    const { status, text } = await get(`/api/checkpoints/${last.id}/events/${kickoff.sequence}`);
    expect(status).toBe(200);
    const record = JSON.parse(text) as { type: string; sequence: number; inputs: Record<string, unknown> };
    expect(record).toMatchObject({ type: 'crew_kickoff_started', sequence: kickoff.sequence });
    expect(record.inputs.topic).toBe('tide pools');
    expect(text).not.toContain(plantedKey);
    const completed = detail.events.find((event) => event.type === 'llm_call_completed')!;
    const call = await get(`/api/checkpoints/${last.id}/events/${completed.sequence}`);
    expect(JSON.parse(call.text)).toMatchObject({ type: 'llm_call_completed' });
    // Nothing the page can ask for holds the key.
    for (const event of detail.events) {
      expect((await get(`/api/checkpoints/${last.id}/events/${event.sequence}`)).text).not.toContain(
        plantedKey,
      );
    }
    expect(JSON.stringify(detail)).not.toContain(plantedKey);
    expect((await get(`/api/checkpoints/${last.id}/events/99999`)).status).toBe(404);
    expect((await get(`/api/checkpoints/${last.id}/events/first`)).status).toBe(400);
  });

  it('plans the continuation with the inputs the form would send: a changed one starts the task over', async () => {
    const midTask = checkpoints.find((checkpoint) => checkpoint.trigger === 'llm_call_completed')!;
    const plan = async (body: unknown) => {
      const response = await fetch(`http://127.0.0.1:${explorer.port}/api/checkpoints/${midTask.id}/plan`, {
        method: 'POST',
        headers: { 'x-crewline-token': explorer.token, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        body: (await response.json()) as ContinuationPlan & { error?: string },
      };
    };
    const research = { number: 1, name: 'research', savedCalls: 1 };
    // The run went on past this checkpoint (its task completed): a resume moves to a new branch and
    // runs the task again, which the plan says (its mode defaults to resume).
    const headOfRun = expect.objectContaining({ headId: checkpoints.at(-1)!.id, runAgain: [1] });
    // Nothing changed, or an input given its saved value: the saved conversation goes on, no call again.
    for (const inputs of [undefined, [], ['topic=tide pools']]) {
      expect(await plan({ outputs: [], ...(inputs ? { inputs } : {}) })).toEqual({
        status: 200,
        body: {
          edited: [],
          inputsChanged: false,
          runs: [expect.objectContaining({ ...research, reason: 'continued' })],
          olderCheckpoint: headOfRun,
        },
      });
    }
    expect(await plan({ inputs: ['topic=kelp forests'] })).toEqual({
      status: 200,
      body: {
        edited: [],
        inputsChanged: true,
        runs: [expect.objectContaining({ ...research, reason: 'restarted' })],
        olderCheckpoint: headOfRun,
      },
    });
    const notAList = await plan({ inputs: 'topic=kelp' });
    expect(notAList.status).toBe(400);
    expect(notAList.body.error).toContain('inputs must be a list of strings');
    expect((await plan({ inputs: ['no equals sign'] })).status).toBe(400);
  });
});
