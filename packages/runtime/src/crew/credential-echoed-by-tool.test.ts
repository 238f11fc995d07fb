// Review R5 of 098575d: a credential given again let an interrupted task continue its saved
// conversation unless its system prompt or first message held [REDACTED]; a tool result that echoed
// the key (an HTTP tool's URL) was saved as [REDACTED] and sent to the model on the continuation.
import { REDACTED } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { offlineModel } from '../e2e/support/fixtures.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { interruptedTasksOutcome } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { captureLogs } from '../testing/index.js';
import { defineTool } from '../tools/define-tool.js';

const secret = 'sk-live-0123456789abcdefghij';

// A tool that holds the key in its closure and echoes the request it made (an HTTP tool's URL).
const fetchTool = defineTool({
  name: 'lookup',
  description: 'Looks a subject up',
  inputSchema: z.object({ query: z.string() }),
  execute: ({ query }) => `GET https://api.example/search?q=${query}&key=${secret} -> 3 facts`,
});

function crew(model: OfflineModel, provider?: InMemoryProvider): Crew {
  const agent = new Agent({
    role: 'Researcher',
    goal: 'Research',
    backstory: 'Calm',
    llm: model,
    tools: [fetchTool],
  });
  return new Crew({
    agents: [agent],
    tasks: [new Task({ description: 'Research {topic}', expectedOutput: 'notes', agent })],
    ...(provider ? { checkpoint: { location: 'mem', provider, onEvents: ['*'] } } : {}),
  });
}

describe('a saved conversation holding [REDACTED] after its first message (a tool echoed the key)', () => {
  it('starts over when the key is given again: the model is never sent [REDACTED]', async () => {
    const provider = new InMemoryProvider();
    const model = offlineModel({ script: [{ toolName: 'lookup', input: { query: 'kelp' } }] });
    await crew(model, provider).kickoff({ inputs: { apiKey: secret, topic: 'kelp' } });
    const list = await provider.list('mem');
    // The checkpoint after the tool's result, before the second model call.
    const after = list.filter((each) => each.trigger === 'tool_usage_finished').at(-1)!;
    const document = await readDocument(provider, 'mem', after.id);
    expect(interruptedTasksOutcome(document, { apiKey: secret, topic: 'kelp' })).toMatchObject({
      action: 'restart',
      cause: 'credential-given-again',
    });
    model.reset();
    const logs = captureLogs();
    try {
      await crew(model).kickoff({
        inputs: { apiKey: secret },
        fromCheckpoint: { restoreFrom: `mem#${after.id}`, provider },
      });
      // Said as what it is: nothing changed, the conversation holds the credential's redacted form
      // (review: it was said as "with the changed inputs it starts over").
      logs.expect(
        `Crew "crew" kickoff: task 1 "Research {topic}" was interrupted; its saved conversation holds a credential as [REDACTED], so with the credential given again it starts over to send the model the real one instead of continuing that conversation; the 1 model call it had made is made again`,
      );
      logs.expect('is not the latest of its run');
    } finally {
      logs.stop();
    }
    const sent = JSON.stringify(model.calls.map((call) => call.messages));
    expect(sent).not.toContain(REDACTED);
  });
});
