import { type LogRecord, setLogSink } from '@crewline/events';
import { type CheckpointProvider, type ProviderEntry, readyProvider } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  resolveCheckpointChain,
  restoreCheckpointSetting,
  storeCheckpointSetting,
} from './checkpoint-setting.js';
import { providerRegistry } from './provider-registry.js';

/** A third-party provider kind: `vault://` locations, one `shelf` option a checkpoint stores. */
function vaultEntry(made: Record<string, unknown>[] = []): ProviderEntry {
  return {
    name: 'vault',
    claims: (reference) => reference.startsWith('vault://'),
    create: (stored) => {
      const options = { shelf: 'default', ...stored };
      made.push(options);
      return Object.assign(new InMemoryProvider(), { kind: 'vault', options });
    },
    storedOptions: (provider) => ({
      shelf: (provider as unknown as { options: { shelf: string } }).options.shelf,
    }),
  };
}

const shelfOf = (provider: CheckpointProvider | undefined) =>
  (provider as unknown as { options?: { shelf?: string } } | undefined)?.options?.shelf;

afterEach(() => setLogSink(null));

describe('a checkpoint setting with a third-party provider', () => {
  it('stores the kind and the options its entry names, and is rebuilt from them by the registry', async () => {
    const made: Record<string, unknown>[] = [];
    const providers = providerRegistry([vaultEntry(made)]);
    const provider = await providers.rebuild('vault', { shelf: 'b' });
    const stored = storeCheckpointSetting({ location: 'vault://runs', provider, providers });
    expect(stored).toEqual({
      location: 'vault://runs',
      providerKind: 'vault',
      providerOptions: { shelf: 'b' },
    });
    // In another process: a fresh registry, and the setting as JSON.
    const elsewhere = providerRegistry([vaultEntry()]);
    const restored = await restoreCheckpointSetting(JSON.parse(JSON.stringify(stored)), elsewhere);
    expect(restored).toMatchObject({ location: 'vault://runs', providers: elsewhere });
    const rebuilt = (restored as { provider?: CheckpointProvider }).provider;
    expect(rebuilt?.kind).toBe('vault');
    expect(shelfOf(rebuilt)).toBe('b');
    expect(made).toEqual([{ shelf: 'default' }, { shelf: 'b' }]);
  });

  it('of a kind the registry lacks is restored without its provider, and says what to register', async () => {
    const logged: LogRecord[] = [];
    setLogSink((record) => logged.push(record));
    const restored = await restoreCheckpointSetting(
      { location: 'vault://runs', providerKind: 'vault', providerOptions: { shelf: 'b' } },
      providerRegistry(),
    );
    expect(restored).toMatchObject({ location: 'vault://runs' });
    expect(restored).not.toHaveProperty('provider');
    expect(logged.map((record) => record.message).join('\n')).toContain(
      'written with a "vault" provider, which is not registered here',
    );
  });

  it('a config naming only a location gets the provider of the entry that claims it', async () => {
    const config = resolveCheckpointChain([
      { location: 'vault://runs', providers: providerRegistry([vaultEntry()]) },
    ]);
    const provider = await readyProvider(config!.provider!);
    expect(provider.kind).toBe('vault');
    expect(() => resolveCheckpointChain([{ location: 'vault://runs' }])).toThrow(
      /no checkpoint provider claims "vault:\/\/runs"/,
    );
  });
});
