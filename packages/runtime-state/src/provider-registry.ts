import { stateError } from './errors.js';
import { LazyProvider } from './lazy-provider.js';
import { type CheckpointProvider, isCheckpointProvider } from './provider.js';

/** Options a provider is rebuilt with from a checkpoint: plain values, never credentials. */
export type StoredProviderOptions = Record<string, string | number | boolean>;

/**
 * One kind of checkpoint storage in a {@link ProviderRegistry}: which locations and references it
 * claims, how its provider is made (importing its package only when first needed) and what a
 * checkpoint stores about it so a restore rebuilds it. crewline's JSON, SQLite and Postgres
 * providers are entries like any other (see `builtinProviders`).
 */
export interface ProviderEntry {
  /**
   * The kind of the providers it makes (`provider.kind`): what a checkpoint stores to name its
   * provider, and how a restore finds this entry again.
   */
  readonly name: string;
  /** The package a user installs to get it, named when it cannot be loaded. Default: none. */
  readonly packageName?: string;
  /**
   * Entries are asked highest first; the first that claims a reference gets it. Built-ins: 0 for
   * SQLite and Postgres, -100 for JSON (which takes any path nobody else claims). Default 0.
   */
  readonly priority?: number;
  /**
   * True when `reference` — a location, `location#id`, or a checkpoint file — is this provider's.
   * Called for every reference the registry resolves: no more than a `stat` or a peek at a header.
   */
  claims(reference: string): boolean;
  /**
   * Makes a provider: with no options its defaults, else the options a checkpoint stored (what
   * {@link storedOptions} gave). May import its package (lazily, on first use) and reject with a
   * `provider_unavailable` error naming the package to install.
   */
  create(options?: StoredProviderOptions): CheckpointProvider | Promise<CheckpointProvider>;
  /**
   * What of a provider's options a checkpoint stores so a restore rebuilds it the same way. Plain
   * values only, and never a credential (a connection string, a password). Default: nothing stored;
   * a restore then uses the defaults.
   */
  storedOptions?(provider: CheckpointProvider): StoredProviderOptions | undefined;
}

/**
 * Where checkpoint providers come from, built by the caller from entries (never filled by side
 * effect): which provider a location or reference calls for, the provider a checkpoint's stored
 * setting names, and one shared provider per entry (opened on first use, closed by {@link close}).
 */
export interface ProviderRegistry {
  /** The entries, highest priority first (in the order given among equals). */
  readonly entries: readonly ProviderEntry[];
  /** The entry named `name`, if any. */
  entry(name: string): ProviderEntry | undefined;
  /** The entry that claims `reference` (highest priority first), if any. */
  entryFor(reference: string): ProviderEntry | undefined;
  /**
   * The entry that claims `reference`, or a `provider_unavailable` error saying how to add one
   * (like every CrewlineError message, with any URL password redacted).
   */
  requireEntryFor(reference: string): ProviderEntry;
  /** The shared provider of entry `name`, created now if needed (rejects when it cannot be). */
  load(name: string): Promise<CheckpointProvider>;
  /**
   * The shared provider of entry `name` without waiting: the provider when it exists or its entry
   * creates synchronously, else a stand-in that creates it on first use (`readyProvider` waits).
   */
  provider(name: string): CheckpointProvider;
  /** The shared provider of entry `name` if it was created already. */
  created(name: string): CheckpointProvider | undefined;
  /** The entry and shared provider for a reference (see {@link requireEntryFor}). */
  open(reference: string): Promise<{ entry: ProviderEntry; provider: CheckpointProvider }>;
  /**
   * A provider of kind `name` as a checkpoint stored it: the shared one when `options` are absent
   * or its own, else one made with them, the same for the same options (closed by {@link close} too).
   */
  rebuild(name: string, options?: StoredProviderOptions): Promise<CheckpointProvider>;
  /** The options a checkpoint stores for `provider` (its entry's `storedOptions`), if any. */
  storedOptionsOf(provider: CheckpointProvider): StoredProviderOptions | undefined;
  /** Closes every provider this registry created (database handles, connection pools). */
  close(): Promise<void>;
  /**
   * Closes every provider this registry created, shared and rebuilt, without waiting: for the way
   * out of a process a signal ends, where nothing awaited runs any more. A provider whose `close` is
   * synchronous (SQLite's: its WAL is copied back into the database) is closed when this returns;
   * one whose `close` returns a promise is only started. Never throws: a provider that fails to
   * close is skipped, the others are still closed.
   */
  closeNow(): void;
}

const invalidEntry = (why: string) =>
  stateError(
    'invalid_config',
    `provider registry: ${why}; see the provider registry in the @crewline/runtime-state README`,
  );

/** True when `value` was made by {@link createProviderRegistry} (or has its shape). */
export function isProviderRegistry(value: unknown): value is ProviderRegistry {
  if (value === null || typeof value !== 'object') return false;
  const candidate = value as Record<string, unknown>;
  return (
    Array.isArray(candidate.entries) &&
    typeof candidate.entryFor === 'function' &&
    typeof candidate.open === 'function' &&
    typeof candidate.rebuild === 'function'
  );
}

function checkEntry(entry: unknown, index: number): ProviderEntry {
  const candidate = entry as Partial<ProviderEntry> | null;
  if (candidate === null || typeof candidate !== 'object')
    throw invalidEntry(`entry ${index} is not an object`);
  if (typeof candidate.name !== 'string' || candidate.name === '')
    throw invalidEntry(`entry ${index} has no name; give it the kind of the providers it makes`);
  if (typeof candidate.claims !== 'function')
    throw invalidEntry(`entry "${candidate.name}" has no claims(reference) function`);
  if (typeof candidate.create !== 'function')
    throw invalidEntry(`entry "${candidate.name}" has no create(options) function`);
  if (candidate.priority !== undefined && !Number.isFinite(candidate.priority))
    throw invalidEntry(`entry "${candidate.name}" has a priority that is not a number`);
  return candidate as ProviderEntry;
}

function isThenable(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function sameOptions(a: StoredProviderOptions, b: StoredProviderOptions): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/**
 * Builds a registry from entries, most often `[...builtinProviders(...), ...yourEntries]`. Later
 * entries with a name already taken replace the earlier one (a project can swap a built-in).
 */
export function createProviderRegistry(entries: readonly ProviderEntry[]): ProviderRegistry {
  const byName = new Map<string, ProviderEntry>();
  entries.forEach((entry, index) => {
    const checked = checkEntry(entry, index);
    byName.delete(checked.name);
    byName.set(checked.name, checked);
  });
  const ordered = [...byName.values()]
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => (b.entry.priority ?? 0) - (a.entry.priority ?? 0) || a.index - b.index)
    .map(({ entry }) => entry);
  const shared = new Map<string, CheckpointProvider>();
  const loading = new Map<string, Promise<CheckpointProvider>>();
  const rebuilt: CheckpointProvider[] = [];
  /**
   * Rebuilds made or under way, so that the same stored options give one provider: a restore asks
   * once per entity (crew, agents) and at once, and a provider each meant a connection each to the
   * same database, whose closing order decided whether SQLite could take its WAL back.
   */
  const rebuilding: { name: string; options: StoredProviderOptions; made: Promise<CheckpointProvider> }[] =
    [];

  const requireEntry = (name: string): ProviderEntry => {
    const entry = byName.get(name);
    if (!entry) {
      throw stateError(
        'provider_unavailable',
        `no checkpoint provider "${name}" is registered; add its entry to \`providers\` in crewline.config.ts for the CLI and, in code, to the registry the checkpoint config names (\`providers: providerRegistry([entry])\`) (registered: ${[...byName.keys()].join(', ') || 'none'})`,
      );
    }
    return entry;
  };

  const accept = (entry: ProviderEntry, provider: unknown): CheckpointProvider => {
    if (!isCheckpointProvider(provider)) {
      throw stateError(
        'provider_unavailable',
        `provider entry "${entry.name}" created something that is not a checkpoint provider; fix its create()${entry.packageName ? ` or update ${entry.packageName}` : ''}`,
      );
    }
    return provider;
  };

  /**
   * The one provider of `entry`'s name once `made` resolves, meanwhile the load every caller of that
   * name waits for. A failed load is not remembered: installing the package and trying again works.
   */
  const share = (entry: ProviderEntry, made: PromiseLike<unknown>): Promise<CheckpointProvider> => {
    const pending = Promise.resolve(made).then((provider) => {
      const accepted = accept(entry, provider);
      shared.set(entry.name, accepted);
      return accepted;
    });
    pending.then(
      () => loading.delete(entry.name),
      () => loading.delete(entry.name),
    );
    loading.set(entry.name, pending);
    return pending;
  };

  /**
   * The providers to close, each once (an entry that hands out one instance, as `providerEntryOf`'s
   * does, gives its rebuilds the shared provider), forgotten so a second close does not repeat it.
   */
  const takeOpened = (): CheckpointProvider[] => {
    const opened = new Set([...shared.values(), ...rebuilt.splice(0)]);
    shared.clear();
    rebuilding.length = 0;
    return [...opened];
  };

  const registry: ProviderRegistry = {
    entries: ordered,
    entry: (name) => byName.get(name),
    entryFor: (reference) => ordered.find((entry) => entry.claims(reference)),
    requireEntryFor(reference) {
      const entry = registry.entryFor(reference);
      if (!entry) {
        throw stateError(
          'provider_unavailable',
          `no checkpoint provider claims "${reference}" (registered: ${ordered.map((candidate) => candidate.name).join(', ') || 'none'}); crewline.config.ts's \`providers\` is what the CLI reads (registerProject does not add them to a run); in code, give the checkpoint config \`providers: providerRegistry([entry])\` (from @crewline/runtime) or a \`provider\``,
        );
      }
      return entry;
    },
    created: (name) => shared.get(name),
    load(name) {
      const existing = shared.get(name);
      if (existing) return Promise.resolve(existing);
      let pending = loading.get(name);
      if (!pending) {
        let entry: ProviderEntry;
        try {
          entry = requireEntry(name);
        } catch (error) {
          return Promise.reject(error);
        }
        pending = share(
          entry,
          Promise.resolve().then(() => entry.create()),
        );
      }
      return pending;
    },
    provider(name) {
      const existing = shared.get(name);
      if (existing) return existing;
      const entry = requireEntry(name);
      if (!loading.has(name)) {
        let made: unknown;
        try {
          made = entry.create();
        } catch {
          // Reported by the stand-in's first use (or `readyProvider`), where the caller waits.
          made = undefined;
        }
        if (made !== undefined && !isThenable(made)) {
          const accepted = accept(entry, made);
          shared.set(name, accepted);
          return accepted;
        }
        if (isThenable(made)) share(entry, made);
      }
      return new LazyProvider(
        name,
        () => registry.load(name),
        () => shared.get(name),
      );
    },
    async open(reference) {
      const entry = registry.requireEntryFor(reference);
      return { entry, provider: await registry.load(entry.name) };
    },
    async rebuild(name, options) {
      const provider = await registry.load(name);
      if (options === undefined) return provider;
      if (sameOptions(registry.storedOptionsOf(provider) ?? {}, options)) return provider;
      const known = rebuilding.find(
        (candidate) => candidate.name === name && sameOptions(candidate.options, options),
      );
      if (known) return known.made;
      const entry = requireEntry(name);
      const made = Promise.resolve()
        .then(() => entry.create(options))
        .then((provider) => {
          const accepted = accept(entry, provider);
          rebuilt.push(accepted);
          return accepted;
        });
      const rebuild = { name, options: { ...options }, made };
      rebuilding.push(rebuild);
      // A failed rebuild is not remembered: installing the package and trying again works.
      made.catch(() => {
        const index = rebuilding.indexOf(rebuild);
        if (index !== -1) rebuilding.splice(index, 1);
      });
      return made;
    },
    storedOptionsOf(provider) {
      const options = byName.get(provider.kind)?.storedOptions?.(provider);
      return options && Object.keys(options).length > 0 ? options : undefined;
    },
    async close() {
      for (const provider of takeOpened()) await provider.close?.();
    },
    closeNow() {
      for (const provider of takeOpened()) {
        try {
          const closing = provider.close?.();
          if (isThenable(closing)) closing.then(undefined, () => undefined);
        } catch {
          // The process is ending: what the provider committed is stored; the others still close.
        }
      }
    },
  };
  return registry;
}

/**
 * An entry for one provider instance you already have: every reference it claims (by default all
 * of them) is read with it. For tests and for a restore given a provider; `storedOptions` is what
 * the entry of its kind stores (pass it on so checkpoints keep storing the same).
 */
export function providerEntryOf(
  provider: CheckpointProvider,
  options: Pick<Partial<ProviderEntry>, 'claims' | 'priority' | 'storedOptions'> = {},
): ProviderEntry {
  return {
    name: provider.kind,
    ...(options.priority !== undefined ? { priority: options.priority } : {}),
    claims: options.claims ?? (() => true),
    create: () => provider,
    ...(options.storedOptions ? { storedOptions: options.storedOptions } : {}),
  };
}
