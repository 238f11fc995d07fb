import { CrewlineError } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterEach } from 'vitest';
import type { ProviderTestkitOptions } from './options.js';

/** Creates providers and locations for one test and disposes of them after it. */
export interface Harness {
  readonly options: ProviderTestkitOptions;
  /** A fresh provider (closed after the test). */
  provider(): Promise<CheckpointProvider>;
  /** A fresh provider made by `createLimitedProvider` (closed after the test). */
  limitedProvider(maxCheckpointBytes: number): Promise<CheckpointProvider>;
  /** A fresh location (removed after the test). */
  location(): Promise<string>;
  /** A fresh provider and a fresh location, already resolved by the provider. */
  setup(): Promise<{ provider: CheckpointProvider; location: string }>;
}

/** Registers the `afterEach` cleanup and returns the harness the suites share. */
export function createHarness(options: ProviderTestkitOptions): Harness {
  let providers: CheckpointProvider[] = [];
  let locations: string[] = [];

  afterEach(async () => {
    const closing = providers;
    const removing = locations;
    providers = [];
    locations = [];
    for (const provider of closing) await provider.close?.();
    for (const location of removing) await options.removeLocation?.(location);
  });

  const harness: Harness = {
    options,
    async provider() {
      const provider = await options.createProvider();
      providers.push(provider);
      return provider;
    },
    async limitedProvider(maxCheckpointBytes) {
      if (!options.createLimitedProvider) {
        throw new CrewlineError(
          'provider-testkit',
          'invalid_config',
          'this test needs the createLimitedProvider option',
        );
      }
      const provider = await options.createLimitedProvider(maxCheckpointBytes);
      providers.push(provider);
      return provider;
    },
    async location() {
      const location = await options.createLocation();
      locations.push(location);
      return location;
    },
    async setup() {
      const provider = await harness.provider();
      const location = provider.resolveLocation(await harness.location());
      return { provider, location };
    },
  };
  return harness;
}
