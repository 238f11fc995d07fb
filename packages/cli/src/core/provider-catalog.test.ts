import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { closeCatalog, createProviderCatalog } from './provider-catalog.js';

function missing(specifier: string): Error {
  return Object.assign(new Error(`Cannot find package '${specifier}' imported from /x`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
}

describe('provider catalog', () => {
  it('says to install @crewline/provider-sqlite when it is missing', async () => {
    const catalog = createProviderCatalog({
      importer: async (specifier) => {
        throw missing(specifier);
      },
    });
    const error = await Promise.resolve(catalog.sqlite!()).catch((caught: unknown) => caught);
    expect(CrewlineError.hasCode(error, 'provider_unavailable')).toBe(true);
    expect((error as Error).message).toContain('install @crewline/provider-sqlite');
  });

  it('reports a provider that is installed but broken (e.g. a native module) differently', async () => {
    const catalog = createProviderCatalog({
      importer: async () => {
        throw missing('better-sqlite3');
      },
    });
    const error = await Promise.resolve(catalog.sqlite!()).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain('is installed but could not be loaded');
  });

  it('imports nothing until asked, constructs once, retries after a failure and closes what it opened', async () => {
    const imported: string[] = [];
    let closed = 0;
    let fail = true;
    class FakeProvider {
      close() {
        closed += 1;
      }
    }
    const catalog = createProviderCatalog({
      importer: async (specifier) => {
        imported.push(specifier);
        if (fail) {
          fail = false;
          throw missing(specifier);
        }
        return { JsonProvider: FakeProvider };
      },
    });
    expect(imported).toEqual([]);
    await expect(Promise.resolve(catalog.json!())).rejects.toThrow(/provider-json/);
    const first = await catalog.json!();
    const second = await catalog.json!();
    expect(first).toBe(second);
    expect(imported).toEqual(['@crewline/provider-json', '@crewline/provider-json']);
    await closeCatalog(catalog);
    expect(closed).toBe(1);
  });

  it('says to install @crewline/provider-postgres when it is missing, and loads it when installed', async () => {
    const missingCatalog = createProviderCatalog({
      importer: async (specifier) => {
        throw missing(specifier);
      },
    });
    const error = await Promise.resolve(missingCatalog.postgres!()).catch((caught: unknown) => caught);
    expect(CrewlineError.hasCode(error, 'provider_unavailable')).toBe(true);
    expect((error as Error).message).toContain('install @crewline/provider-postgres');
    // The real package: constructing the provider connects to nothing.
    const catalog = createProviderCatalog();
    const provider = await catalog.postgres!();
    expect(provider.kind).toBe('postgres');
    expect(provider.capabilities.leases).toBe(true);
    await closeCatalog(catalog);
  });
});
