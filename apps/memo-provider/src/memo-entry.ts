import type { ProviderEntry } from '@crewline/runtime-state';
import { MemoProvider, type MemoProviderOptions } from './memo-provider.js';

/**
 * The registry entry of {@link MemoProvider}: it claims `memo://` locations and references, makes
 * the provider with `defaults` (or with what a checkpoint stored), and stores its `root` in every
 * checkpoint so a restore — in the CLI, another process — writes where the run wrote. List it in
 * `crewline.config.ts`: `export default defineConfig({ providers: [memoProviderEntry()] })`.
 */
export function memoProviderEntry(defaults: MemoProviderOptions = {}): ProviderEntry {
  return {
    name: 'memo',
    packageName: '@crewline/example-memo-provider',
    claims: (reference) => MemoProvider.claims(reference),
    create: (stored) => new MemoProvider(stored ? { ...defaults, ...stored } : defaults),
    storedOptions: (provider) => ({ root: (provider as MemoProvider).options.root }),
  };
}
