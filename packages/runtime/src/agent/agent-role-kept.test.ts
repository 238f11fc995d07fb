// A standalone agent's role is what its checkpoint names it by and what a restore rebuilds it from: a
// registered credential that is a word of the role (an address input's password) must not rewrite it
// (review RI-3 of b54def8: roles were kept from value redaction only by a Crew's constructor, so a
// standalone agent was stored, restored and prompted as "[REDACTED] scout").
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { expect, it } from 'vitest';
import { offlineModel } from '../testing/index.js';
import { Agent } from './agent.js';

it("a standalone agent's role holding an address input's password is stored whole", async () => {
  const provider = new InMemoryProvider();
  const password = 'kelpfarm7Q';
  const role = `${password} scout`;
  const agent = new Agent({
    role,
    goal: 'Find facts',
    backstory: 'Careful',
    llm: offlineModel({ script: () => ({ text: `found ${password}` }) }),
    checkpoint: { location: 'memory', provider, onEvents: ['*'] },
  });
  await agent.kickoff('Find facts', { inputs: { db: `postgres://app:${password}@db/app` } });
  const [last] = (await provider.list('memory')).slice(-1);
  const document = JSON.stringify(await provider.read('memory', last!.id));
  expect(document).toContain(role);
  expect(document).not.toContain('[REDACTED] scout');
  // Elsewhere the password is still redacted: the answer quoting it.
  expect(document).not.toContain(`found ${password}`);
});
