import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { createProviderRegistry, providerEntryOf } from './provider-registry.js';
import { resolveReference } from './reference.js';
import { RuntimeState } from './runtime-state.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

describe('resolveReference', () => {
  const provider = new InMemoryProvider();
  const registry = createProviderRegistry([providerEntryOf(provider)]);
  const state = new RuntimeState({ provider, location: 'mem' });
  const first = state.checkpoint();
  const second = state.checkpoint();
  const [, firstId] = first.split('#') as [string, string];
  const [, secondId] = second.split('#') as [string, string];

  it('resolves exact ids, a location as its latest, and unique prefixes when allowed', async () => {
    const resolved = await resolveReference(first, registry);
    expect(resolved.checkpoint.id).toBe(firstId);
    expect(resolved.providers).toBe(registry);
    expect((await resolveReference('mem#', registry)).checkpoint.id).toBe(secondId);
    expect(
      (await resolveReference(`mem#${firstId.slice(0, -3)}`, registry, { allowPrefix: true })).checkpoint.id,
    ).toBe(firstId);
  });

  it('accepts a unique start of the random part after the time', async () => {
    const suffix = secondId.slice(secondId.lastIndexOf('-') + 1, secondId.lastIndexOf('-') + 7);
    expect((await resolveReference(`mem#${suffix}`, registry, { allowPrefix: true })).checkpoint.id).toBe(
      secondId,
    );
    const exactOnly = await resolveReference(`mem#${suffix}`, registry).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(exactOnly, 'not_found')).toBe(true);
  });

  it('reports unknown and ambiguous ids with typed errors', async () => {
    const unknown = await resolveReference('mem#nope', registry).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(unknown, 'not_found')).toBe(true);
    const sharedPrefix = firstId.slice(0, 4);
    const ambiguous = await resolveReference(`mem#${sharedPrefix}`, registry, { allowPrefix: true }).catch(
      (error: unknown) => error,
    );
    expect(CrewlineError.hasCode(ambiguous, 'ambiguous_reference')).toBe(true);
  });

  it('is provider_unavailable when no entry claims the reference', async () => {
    const none = createProviderRegistry([
      providerEntryOf(provider, { claims: (reference) => reference.startsWith('mem') }),
    ]);
    const failure = await resolveReference('elsewhere#x', none).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'provider_unavailable')).toBe(true);
    expect((failure as Error).message).toContain('no checkpoint provider claims "elsewhere#x"');
  });
});
