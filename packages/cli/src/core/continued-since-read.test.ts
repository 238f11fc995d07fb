import { CrewlineError } from '@crewline/events';
import { expect, it } from 'vitest';
import { continuedSinceReadInWords, continuedSinceReadWordsOfBrowser } from './continued-since-read.js';

// Review of today's fixes: the terminal UI showed the library's advice (restoreFrom, onConflict).
it('says the terminal UI its keys, not the library options', () => {
  const refusal = new CrewlineError('runtime', 'conflict', 'library words: restoreFrom, onConflict', {
    details: { checkpointId: 'c-old', headId: 'c-new', lineageId: 'l', continuedSinceRead: true },
  });
  const said = continuedSinceReadInWords(refusal, continuedSinceReadWordsOfBrowser);
  expect(said?.code).toBe('conflict');
  expect(said?.message).toContain("press r to reload the tree, select c-new, the run's latest, and press e");
  expect(said?.message).toContain('press f on c-old');
  expect(said?.message).not.toMatch(/restoreFrom|onConflict/);
});
