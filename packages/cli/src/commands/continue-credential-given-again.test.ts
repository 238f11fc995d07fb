// `crewline checkpoint fork <id> --input apiKey=<key>` for an input saved as [REDACTED]: the heading
// says the credential is given again, not changed, as the runtime (changesInputs) and the plan
// (inputsChanged: false) treat it, and the task continues its conversation (review RC-2: the
// heading said "changed inputs: apiKey"). A real change is still said as one.
import { join } from 'node:path';
import { Agent, Crew, Task } from '@crewline/runtime';
import { captureLogs } from '@crewline/runtime/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

const secret = 'sk-live-0123456789abcdefghij';
const db = 'postgres://admin:Sup3rS3cretPassw0rd@db.internal/app';
let project: Awaited<ReturnType<typeof temporaryDirectory>>;
let id: string;

beforeAll(async () => {
  project = await temporaryDirectory('crewline-rc-');
  const location = join(project.path, '.checkpoints');
  const provider = await providerOf('json');
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write about {topic}',
    backstory: 'Plain',
    llm: 'offline:rc',
  });
  const crew = new Crew({
    name: 'Keyed crew',
    agents: [writer],
    tasks: [
      new Task({ name: 'outline', description: 'Outline {topic}', expectedOutput: 'Lines', agent: writer }),
      new Task({ name: 'write', description: 'Write on {topic}', expectedOutput: 'Lines', agent: writer }),
    ],
    checkpoint: { location, provider, onEvents: ['llm_call_completed'] },
  });
  await crew.kickoff({
    inputs: { topic: 'tides', apiKey: secret, since: new Date('2026-01-01T00:00:00.000Z'), db },
  });
  const written = await provider.list(provider.resolveLocation(location));
  await provider.close?.();
  id = [...written].sort((a, b) => a.eventCount - b.eventCount).at(-1)!.id;
});
afterAll(async () => {
  await project?.remove();
});

it('says a credential given again as given again, not as a change', async () => {
  const logs = captureLogs();
  const result = await runCommand(['checkpoint', 'fork', id, '--input', `apiKey=${secret}`], {
    cwd: project.path,
  }).finally(() => logs.stop({ allowUnexpected: true }));
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('task 2 write continues its saved conversation');
  expect(result.stdout).toContain('credentials given again (saved as [REDACTED], no change): apiKey');
  expect(result.stdout).not.toContain('changed inputs');
});

it('says a changed input beside it as changed', async () => {
  const logs = captureLogs();
  const result = await runCommand(
    ['checkpoint', 'fork', id, '--input', `apiKey=${secret}`, '--input', 'topic=kelp'],
    { cwd: project.path },
  ).finally(() => logs.stop({ allowUnexpected: true }));
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('changed inputs: topic');
  expect(result.stdout).toContain('credentials given again (saved as [REDACTED], no change): apiKey');
});

it('says an input given as saved in another form (a Date) as saved, not as a credential (review RG-6)', async () => {
  const logs = captureLogs();
  const result = await runCommand(['checkpoint', 'fork', id, '--input', 'since=2026-01-01T00:00:00.000Z'], {
    cwd: project.path,
  }).finally(() => logs.stop({ allowUnexpected: true }));
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('inputs as saved: since');
  expect(result.stdout).not.toContain('credentials given again');
  expect(result.stdout).not.toContain('changed inputs');
});

it('says an address whose password is saved as [REDACTED], given again, as given again (review RG-2)', async () => {
  const logs = captureLogs();
  const result = await runCommand(['checkpoint', 'fork', id, '--input', `db=${db}`], {
    cwd: project.path,
  }).finally(() => logs.stop({ allowUnexpected: true }));
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('credentials given again (saved as [REDACTED], no change): db');
  expect(result.stdout).not.toContain('changed inputs');
});
