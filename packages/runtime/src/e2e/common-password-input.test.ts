import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventBus, REDACTED } from '@crewline/events';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Flow, start } from '../flow/index.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { defineTool } from '../tools/define-tool.js';
import { allFiles, offlineModel, temporaryDirectory } from './support/fixtures.js';

// Review RF-1 of f6dcd4e: the password of an address input is redacted by value process-wide, so a
// common word given as one ('password') rewrote every text the process stored afterwards, and a word
// that names a tool, an agent, a crew or a flow made the checkpoint unresumable.
let directory: { path: string; cleanup: () => void };
beforeEach(() => {
  directory = temporaryDirectory();
});
afterEach(() => directory.cleanup());

let runs = 0;
function storedText(location: string): string {
  return allFiles(location)
    .map((file) => readFileSync(join(location, file), 'utf8'))
    .join('\n');
}

async function answeredRun(inputs: Record<string, unknown>, answer: string): Promise<string> {
  runs += 1;
  const location = join(directory.path, `run-${runs}`);
  const agent = new Agent({
    role: 'Writer',
    goal: 'Write',
    backstory: 'B',
    llm: offlineModel({ script: () => ({ text: answer }) }),
  });
  await new Crew({
    agents: [agent],
    tasks: [new Task({ description: 'Write the policy for {topic}', expectedOutput: 'x', agent })],
    checkpoint: { location, onEvents: ['*'] },
  }).kickoff({ inputs: { topic: 'AI', ...inputs } });
  return storedText(location);
}

it('a well-known default password of an address input is redacted in its address only, not as a word of every later text', async () => {
  const first = await answeredRun(
    { db: 'postgres://app:password@localhost:5432/app' },
    'Rotate passwords every 90 days; the password policy applies to admins.',
  );
  expect(first).toContain('Rotate passwords every 90 days; the password policy');
  expect(first).toContain(`postgres://app:${REDACTED}@localhost:5432/app`);
  expect(first).not.toContain('app:password@');
  // Exactly a listed word (case aside): `Welcome1` or `letmein2024` is a password like any other and is
  // redacted by value (review RI-1; events environment-credentials.test.ts).
  for (const common of ['changeme', 'administrator', 'Passw0rd']) {
    const text = await answeredRun(
      { db: `postgres://app:${common}@localhost:5432/app` },
      `The default was ${common}; change it.`,
    );
    expect(text, common).toContain(`The default was ${common}; change it.`);
    expect(text, common).not.toContain(`app:${common}@`);
  }
  // A later run of the same process (a worker's next run) with no address at all.
  const later = await answeredRun({}, 'Forgot your password? Click reset.');
  expect(later).toContain('Forgot your password? Click reset.');
});

it('a password that is also a word of a tool, agent role or crew name leaves those names whole: the checkpoint resumes', async () => {
  // Not a dictionary password, so it is redacted by value; it is also a word of the names the run stores.
  const password = 'warehouse';
  const queryTool = defineTool({
    name: 'query_warehouse_orders',
    description: 'Reads the orders',
    inputSchema: z.object({ query: z.string() }),
    execute: ({ query }) => `orders for ${query}: 3`,
  });
  const location = join(directory.path, 'names');
  const agent = new Agent({
    role: 'warehouse analyst',
    goal: 'Audit',
    backstory: 'B',
    llm: offlineModel({
      script: [{ toolName: 'query_warehouse_orders', input: { query: 'x' } }, { text: `found ${password}` }],
      failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Write'),
    }),
    tools: [queryTool],
  });
  await new Crew({
    name: 'warehouse-audit',
    agents: [agent],
    tasks: [
      new Task({ description: 'Audit {topic}', expectedOutput: 'x', agent }),
      new Task({ description: 'Write a summary', expectedOutput: 'x', agent }),
    ],
    checkpoint: { location },
  })
    .kickoff({ inputs: { topic: 'AI', db: `postgres://app:${password}@localhost:5432/app` } })
    .catch(() => undefined);
  const stored = storedText(location);
  expect(stored).toContain('query_warehouse_orders');
  expect(stored).toContain('warehouse analyst');
  expect(stored).toContain('warehouse-audit');
  expect(stored).not.toMatch(/_\[REDACTED\]_orders|\[REDACTED\] analyst|\[REDACTED\]-audit/);
  // Elsewhere the password is still redacted: the model's answer quoting it bare.
  expect(stored).toContain(`found ${REDACTED}`);
  const result = await continueFromCheckpoint({
    reference: location,
    mode: 'resume',
    registry: new ProjectRegistry().register({
      models: { 'offline:default': offlineModel() },
      tools: { query_warehouse_orders: queryTool },
    }),
    inputs: { db: `postgres://app:${password}@localhost:5432/app` },
  });
  expect(result.kind).toBe('crew');
});

it('a flow whose name and method name hold the password keeps them', async () => {
  const password = 'ledgerbook';
  const location = join(directory.path, 'flow');
  class LedgerbookSync extends Flow {
    static flowName = 'ledgerbook-sync';
    @start()
    read_ledgerbook() {
      return `synced ${password}`;
    }
  }
  await new LedgerbookSync({ bus: new EventBus(), checkpoint: { location, onEvents: ['*'] } }).kickoff({
    inputs: { db: `postgres://app:${password}@localhost:5432/app` },
  });
  const stored = storedText(location);
  expect(stored).toContain('ledgerbook-sync');
  expect(stored).toContain('read_ledgerbook');
  expect(stored).not.toMatch(/\[REDACTED\]-sync|read_\[REDACTED\]/);
  expect(stored).toContain(`synced ${REDACTED}`);
});
