import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { describe, expect, it, vi } from 'vitest';
import { builtinProviders } from './builtin-providers.js';
import { LazyProvider, readyProvider } from './lazy-provider.js';
import type { CheckpointProvider } from './provider.js';
import { createProviderRegistry, type ProviderEntry } from './provider-registry.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

function missing(specifier: string): Error {
  return Object.assign(new Error(`Cannot find package '${specifier}' imported from /x`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
}

/** A provider class that records the options it was made with, as each built-in package exports. */
function fakeModule(kind: string, made: unknown[]) {
  return class {
    constructor(options: Record<string, unknown> = { durable: true }) {
      made.push(options);
      // biome-ignore lint/correctness/noConstructorReturn: a provider of another kind, as a package exports
      return Object.assign(new InMemoryProvider(), { kind, options });
    }
  };
}

function fakeBuiltins(imported: string[] = [], made: unknown[] = []) {
  return builtinProviders({
    importModule: async (specifier) => {
      imported.push(specifier);
      return {
        JsonProvider: fakeModule('json', made),
        SqliteProvider: fakeModule('sqlite', made),
        PostgresProvider: fakeModule('postgres', made),
      };
    },
  });
}

describe('the built-in entries', () => {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-registry-'));
  const database = join(directory, 'store.bin');
  writeFileSync(database, Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), Buffer.alloc(100)]));
  mkdirSync(join(directory, 'json'));
  const registry = createProviderRegistry(fakeBuiltins());
  const kindOf = (reference: string) => registry.entryFor(reference)?.name;

  it('tell Postgres URLs, SQLite files and JSON locations apart', () => {
    expect(kindOf('postgres://user@host/db#abc')).toBe('postgres');
    expect(kindOf('postgresql://host/db')).toBe('postgres');
    expect(kindOf(database)).toBe('sqlite');
    expect(kindOf(`${database}#someid`)).toBe('sqlite');
    expect(kindOf('./missing.db')).toBe('sqlite');
    expect(kindOf(join(directory, 'json'))).toBe('json');
    mkdirSync(join(directory, 'named.db'));
    expect(kindOf(join(directory, 'named.db'))).toBe('json');
    expect(kindOf(`${join(directory, 'json')}#someid`)).toBe('json');
    expect(kindOf(join(directory, 'json', 'main', 'x.json'))).toBe('json');
    expect(kindOf('memo://elsewhere')).toBeUndefined();
  });

  it('say which package to install when one is missing, and tell a broken install apart', async () => {
    const absent = createProviderRegistry(
      builtinProviders({
        importModule: async (specifier) => {
          throw missing(specifier);
        },
      }),
    );
    const error = await absent.open(database).catch((caught: unknown) => caught);
    expect(CrewlineError.hasCode(error, 'provider_unavailable')).toBe(true);
    expect((error as Error).message).toContain('install @crewline/provider-sqlite');
    const postgres = await absent.open('postgres://db/x').catch((caught: unknown) => caught);
    expect((postgres as Error).message).toContain('install @crewline/provider-postgres');
    const broken = createProviderRegistry(
      builtinProviders({
        importModule: async () => {
          throw missing('better-sqlite3');
        },
      }),
    );
    const brokenError = await broken.load('sqlite').catch((caught: unknown) => caught);
    expect((brokenError as Error).message).toContain('is installed but could not be loaded');
  });

  it("name the install command of the project's package manager, not always npm's", async () => {
    const absent = createProviderRegistry(
      builtinProviders({
        importModule: async (specifier) => {
          throw missing(specifier);
        },
      }),
    );
    const messageWith = async (agent: string) => {
      vi.stubEnv('npm_config_user_agent', agent);
      try {
        return ((await absent.open(database).catch((caught: unknown) => caught)) as Error).message;
      } finally {
        vi.unstubAllEnvs();
      }
    };
    expect(await messageWith('yarn/4.5.0 npm/? node/v20.19.0')).toContain(
      '(yarn add @crewline/provider-sqlite)',
    );
    expect(await messageWith('pnpm/10.4.1 npm/? node/v20.19.0')).toContain(
      '(pnpm add @crewline/provider-sqlite)',
    );
    expect(await messageWith('npm/10.8.2 node/v20.19.0')).toContain(
      '(npm install @crewline/provider-sqlite)',
    );
  });

  it('import nothing until asked, once per entry, and again after a failure', async () => {
    const imported: string[] = [];
    let fail = true;
    const registry = createProviderRegistry(
      builtinProviders({
        importModule: async (specifier) => {
          imported.push(specifier);
          if (fail) {
            fail = false;
            throw missing(specifier);
          }
          return { JsonProvider: fakeModule('json', []) };
        },
      }),
    );
    expect(imported).toEqual([]);
    await expect(registry.load('json')).rejects.toThrow(/provider-json/);
    const first = await registry.load('json');
    expect(await registry.load('json')).toBe(first);
    expect(imported).toEqual(['@crewline/provider-json', '@crewline/provider-json']);
  });

  it('make a provider synchronously from a module the caller already imported', () => {
    const registry = createProviderRegistry(
      builtinProviders({
        importModule: async () => {
          throw new Error('not imported again');
        },
        modules: { '@crewline/provider-json': { JsonProvider: fakeModule('json', []) } },
      }),
    );
    const provider = registry.provider('json');
    expect(provider).not.toBeInstanceOf(LazyProvider);
    expect(provider.kind).toBe('json');
    expect(registry.provider('json')).toBe(provider);
  });

  it('stand in for a provider still being imported, and rebuild stored options', async () => {
    const made: unknown[] = [];
    const registry = createProviderRegistry(fakeBuiltins([], made));
    const standIn = registry.provider('sqlite');
    expect(standIn).toBeInstanceOf(LazyProvider);
    const real = await readyProvider(standIn);
    expect(real.kind).toBe('sqlite');
    expect(registry.created('sqlite')).toBe(real);
    expect(registry.storedOptionsOf(real)).toEqual({ durable: true });
    expect(await registry.rebuild('sqlite', { durable: true })).toBe(real);
    const other = await registry.rebuild('sqlite', { durable: false });
    expect(other).not.toBe(real);
    expect(made).toEqual([{ durable: true }, { durable: false }]);
    expect(registry.storedOptionsOf(await registry.load('postgres'))).toBeUndefined();
  });

  it('rebuild the same stored options into one provider, asked at once or later', async () => {
    const made: unknown[] = [];
    const registry = createProviderRegistry(fakeBuiltins([], made));
    const [first, second] = await Promise.all([
      registry.rebuild('sqlite', { durable: false }),
      registry.rebuild('sqlite', { durable: false }),
    ]);
    expect(second).toBe(first);
    expect(await registry.rebuild('sqlite', { durable: false })).toBe(first);
    expect(made).toEqual([{ durable: true }, { durable: false }]);
  });
});

describe('a registry built by the caller', () => {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-registry-'));
  const marked = join(directory, 'marked');
  mkdirSync(marked);
  writeFileSync(join(marked, '.memo-store'), '');

  function memoEntry(created: CheckpointProvider[]): ProviderEntry {
    return {
      name: 'memo',
      packageName: 'memo-provider',
      priority: 10,
      claims: (reference) => reference.startsWith('memo://') || existsSync(join(reference, '.memo-store')),
      create: () => {
        const provider = Object.assign(new InMemoryProvider(), { kind: 'memo' });
        created.push(provider);
        return provider;
      },
    };
  }

  it('asks higher priorities first, so an entry can claim what a built-in would take', () => {
    const registry = createProviderRegistry([...fakeBuiltins(), memoEntry([])]);
    expect(registry.entries.map((entry) => entry.name)).toEqual(['memo', 'postgres', 'sqlite', 'json']);
    expect(registry.entryFor(marked)?.name).toBe('memo');
    expect(registry.entryFor(directory)?.name).toBe('json');
    expect(registry.entryFor('memo://runs')?.name).toBe('memo');
  });

  it('lets a later entry of the same name replace an earlier one', () => {
    const replacement: ProviderEntry = {
      name: 'json',
      claims: () => true,
      create: () => new InMemoryProvider(),
    };
    const registry = createProviderRegistry([...fakeBuiltins(), replacement]);
    expect(registry.entry('json')).toBe(replacement);
    expect(registry.entries).toHaveLength(3);
  });

  it('refuses entries without a name, claims or create, naming what is missing', () => {
    expect(() =>
      createProviderRegistry([{ name: '', claims: () => true, create: () => new InMemoryProvider() }]),
    ).toThrow(/entry 0 has no name/);
    expect(() =>
      createProviderRegistry([{ name: 'x', create: () => new InMemoryProvider() } as never]),
    ).toThrow(/entry "x" has no claims\(reference\) function/);
  });

  it('refuses a created value that is not a provider, and an unknown stored kind', async () => {
    const registry = createProviderRegistry([
      { name: 'odd', claims: () => true, create: () => ({}) as never },
    ]);
    await expect(registry.load('odd')).rejects.toThrow(/created something that is not a checkpoint provider/);
    const unknown = await registry.rebuild('memo').catch((error: unknown) => error);
    expect(CrewlineError.hasCode(unknown, 'provider_unavailable')).toBe(true);
    expect((unknown as Error).message).toContain('no checkpoint provider "memo" is registered');
  });

  it('keeps a URL password out of the message when nothing claims a location', () => {
    const registry = createProviderRegistry([memoEntry([])]);
    const error = (() => {
      try {
        registry.requireEntryFor('mysql://user:hunter2@host/db');
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error?.message).toContain('no checkpoint provider claims "mysql://user:');
    expect(error?.message).not.toContain('hunter2');
  });

  it('closes what it created', async () => {
    const created: CheckpointProvider[] = [];
    let closed = 0;
    const registry = createProviderRegistry([
      {
        ...memoEntry(created),
        create: () =>
          Object.assign(new InMemoryProvider(), {
            kind: 'memo',
            close: () => {
              closed += 1;
            },
          }),
      },
    ]);
    await registry.load('memo');
    await registry.close();
    expect(closed).toBe(1);
    expect(registry.created('memo')).toBeUndefined();
  });

  it('closes now, without waiting, the shared and the rebuilt providers, past one that fails', async () => {
    const closed: string[] = [];
    let rejected = false;
    const registry = createProviderRegistry([
      {
        name: 'memo',
        claims: () => true,
        create: (options) =>
          Object.assign(new InMemoryProvider(), {
            kind: 'memo',
            close: () => {
              if (options?.mode === 'throws') throw new Error('cannot close');
              if (options?.mode === 'rejects') {
                closed.push('rejects');
                return Promise.reject(new Error('cannot close')).finally(() => {
                  rejected = true;
                });
              }
              closed.push(String(options?.mode ?? 'shared'));
            },
          }),
        storedOptions: () => ({}),
      },
    ]);
    await registry.load('memo');
    for (const mode of ['throws', 'rejects', 'full']) await registry.rebuild('memo', { mode });
    registry.closeNow();
    expect(closed).toEqual(['shared', 'rejects', 'full']);
    await vi.waitFor(() => expect(rejected).toBe(true));
    expect(registry.created('memo')).toBeUndefined();
    registry.closeNow();
    await registry.close();
    expect(closed).toHaveLength(3);
  });
});
