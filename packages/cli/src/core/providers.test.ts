import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { CliContext } from './cli-context.js';
import { cliProviderRegistry, closeProviders, providersOf } from './providers.js';

function missing(specifier: string): Error {
  return Object.assign(new Error(`Cannot find package '${specifier}' imported from /x`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
}

const quiet = { write: () => true };

describe("the CLI's provider registry", () => {
  it('says to install @crewline/provider-sqlite when a SQLite location needs it and it is missing', async () => {
    const registry = cliProviderRegistry({
      importModule: async (specifier) => {
        throw missing(specifier);
      },
    });
    const error = await registry.open('/tmp/runs.db').catch((caught: unknown) => caught);
    expect(CrewlineError.hasCode(error, 'provider_unavailable')).toBe(true);
    expect((error as Error).message).toContain('install @crewline/provider-sqlite');
  });

  it('imports nothing until a location is opened, then only the package that location needs', async () => {
    const imported: string[] = [];
    const registry = cliProviderRegistry({
      importModule: async (specifier) => {
        imported.push(specifier);
        return import(specifier);
      },
    });
    expect(imported).toEqual([]);
    await registry.open(process.cwd());
    expect(imported).toEqual(['@crewline/provider-json']);
    await registry.close();
  });

  it('loads the real Postgres package for a postgres:// location (connecting to nothing) and closes it', async () => {
    const registry = cliProviderRegistry();
    const { provider } = await registry.open('postgres://localhost/runs');
    expect(provider.kind).toBe('postgres');
    expect(provider.capabilities.leases).toBe(true);
    await registry.close();
  });

  it('is one registry per context, the one a context brings when it brings one', async () => {
    const context: CliContext = { cwd: process.cwd(), env: {}, stdout: quiet, stderr: quiet };
    const first = await providersOf(context);
    expect(await providersOf(context)).toBe(first);
    await closeProviders(context);
    expect(await providersOf(context)).not.toBe(first);
    const own = cliProviderRegistry();
    expect(await providersOf({ ...context, providers: own })).toBe(own);
  });
});
