// A checkpoint file nested thousands of levels deep (a hostile or damaged file) is refused with a
// typed error naming where, by every restore entry point, instead of overflowing the stack in
// validation or in the conversation's copy.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { MAX_NESTING_DEPTH } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Crew } from '../crew/crew.js';
import {
  checkpointFiles,
  temporaryDirectory,
  threeTaskCrew,
  toolUsingModel,
} from '../e2e/support/fixtures.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';

let directory: { path: string; cleanup: () => void };

beforeEach(() => {
  directory = temporaryDirectory();
});

afterEach(() => directory.cleanup());

/** Nests `levels` objects (`{"role": {"role": ...}}`) as a conversation message would be. */
function deepObject(levels: number): unknown {
  let value: unknown = 'user';
  for (let level = 0; level < levels; level += 1) value = { role: value };
  return value;
}

describe('a checkpoint nested deeper than MAX_NESTING_DEPTH', () => {
  it('is refused with a typed too_large error naming the field, by restore and resume', async () => {
    const location = join(directory.path, 'cp');
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const file = checkpointFiles(location)[0]!;
    const document = JSON.parse(readFileSync(file, 'utf8'));
    // The first task's in-progress conversation, as restoreConversation reads it back.
    document.entities[0].data.tasks[0].conversation = { messages: [deepObject(2000)], llmCalls: 1 };
    writeFileSync(file, JSON.stringify(document));
    for (const attempt of [
      () => Crew.fromCheckpoint({ restoreFrom: file }),
      () => continueFromCheckpoint({ reference: file, mode: 'resume' }),
    ]) {
      const refusal = await attempt().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(CrewlineError.isInstance(refusal), String(refusal)).toBe(true);
      expect(refusal).toMatchObject({ code: 'too_large' });
      expect((refusal as Error).message).toContain(
        `nested more than ${MAX_NESTING_DEPTH} levels deep at entities.0.data.tasks.0.conversation.messages`,
      );
    }
  });
});
