import { CrewlineError } from '@crewline/events';
import { expect, it } from 'vitest';
import { resolveModel } from '../models/resolve-model.js';
import { MissingParts } from './agent-snapshot.js';

/** The message of what `action` throws. */
function messageOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(CrewlineError.hasCode(error, 'not_rebuildable')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('nothing was thrown');
}

// An unknown model id "readme:model" is served either by registering that model under its id or by
// registering a provider for its prefix: both hints name what to write, each with the right key.
it('a missing prefixed model id: register the model under its id, or a provider for its prefix', () => {
  const missing = new MissingParts();
  missing.models.add('readme:model');
  const message = messageOf(() => missing.throwIfAny('crew readme'));
  expect(message).toContain("models: { 'readme:model': yourModel }");
  expect(message).toContain("modelProviders: { 'readme': create…({...}) }");
});

it('a model id whose provider is unknown: the same two ways', () => {
  const message = messageOf(() => resolveModel('readme:model', { env: {} }));
  expect(message).toContain("models: { 'readme:model': yourModel }");
  expect(message).toContain("modelProviders: { 'readme': create…({...}) }");
});
