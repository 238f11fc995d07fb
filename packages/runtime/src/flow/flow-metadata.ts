import type { CheckpointProvider } from '@crewline/runtime-state';
import type { ConditionInput } from './conditions.js';
import { flowError } from './errors.js';

// Node 20 has no `Symbol.metadata`. Without it, code compiled by tsc passes `undefined` as
// `context.metadata` and crashes; esbuild (tsx, vitest) falls back to `Symbol.for('Symbol.metadata')`.
// Defining it here, in the module that defines the decorators, runs before any decorated flow class
// is evaluated (that class imports this module) and makes both compilers agree on one symbol.
(Symbol as { metadata?: symbol }).metadata ??= Symbol.for('Symbol.metadata');

/** What the decorators record for one method of a flow class. */
export interface MethodSpec {
  name: string;
  /** Declaration order, so listeners fire in the order they are written. */
  order: number;
  start: boolean;
  router: boolean;
  /** What the method listens to (`listen(...)` or `router(...)`). */
  trigger: ConditionInput | undefined;
  persisted: boolean;
  /** The function as declared, to resolve method references given as functions. */
  implementation: (...args: unknown[]) => unknown;
}

/** Options of `@persist()`. */
export interface PersistOptions {
  /**
   * Where state snapshots go when the flow has no `checkpoint` config of its own (with one, they go
   * where the flow checkpoints). A directory (JSON), a database file (SQLite) or a connection
   * string (Postgres). Default `'./.checkpoints'`.
   */
  location?: string;
  /** The provider for `location`. Default: a `JsonProvider`. */
  provider?: CheckpointProvider;
}

/** The decorator records of one class (its own; parents' are found through the prototype chain). */
export interface FlowClassRecord {
  methods: Map<string, MethodSpec>;
  /** `@persist()` on the class: every method of the flow is persisted. */
  persistClass: PersistOptions | undefined;
  /** Options given to `@persist()` on a method (the first one wins). */
  persistMethodOptions: PersistOptions | undefined;
}

const recordKey = Symbol('crewline.flow');
let declarationCounter = 0;

type Metadata = Record<PropertyKey, unknown>;

/** The record of the class being decorated; created on first use, never shared with a parent class. */
export function ownRecord(metadata: DecoratorMetadataObject | undefined): FlowClassRecord {
  if (!metadata) {
    throw flowError(
      'invalid_config',
      'decorator metadata is missing; compile flows with TypeScript 5.2+ standard decorators (turn experimentalDecorators off)',
    );
  }
  const bag = metadata as Metadata;
  if (Object.hasOwn(bag, recordKey)) return bag[recordKey] as FlowClassRecord;
  const record: FlowClassRecord = {
    methods: new Map(),
    persistClass: undefined,
    persistMethodOptions: undefined,
  };
  Object.defineProperty(bag, recordKey, {
    value: record,
    enumerable: false,
    configurable: true,
    writable: true,
  });
  return record;
}

/** Updates (or creates) the spec of one method of the class being decorated. */
export function recordMethod(
  context: ClassMethodDecoratorContext,
  implementation: (...args: unknown[]) => unknown,
  update: (spec: MethodSpec) => void,
): void {
  if (context.static || context.private) {
    throw flowError(
      'invalid_config',
      `${String(context.name)}: flow decorators go on public instance methods, not static or #private ones`,
    );
  }
  const record = ownRecord(context.metadata);
  const name = String(context.name);
  let spec = record.methods.get(name);
  if (!spec) {
    declarationCounter += 1;
    spec = {
      name,
      order: declarationCounter,
      start: false,
      router: false,
      trigger: undefined,
      persisted: false,
      implementation,
    };
    record.methods.set(name, spec);
  }
  update(spec);
}

/**
 * Every record of a flow class, most derived last (so a subclass's decorations of a method name
 * replace its parent's). Works with classes compiled by tsc or esbuild alike.
 */
export function classRecords(flowClass: abstract new (...args: never[]) => unknown): FlowClassRecord[] {
  const records: FlowClassRecord[] = [];
  const metadataSymbol = (Symbol as { metadata?: symbol }).metadata as symbol;
  let metadata = (flowClass as unknown as Metadata)[metadataSymbol] as Metadata | null | undefined;
  while (metadata) {
    if (Object.hasOwn(metadata, recordKey)) records.unshift(metadata[recordKey] as FlowClassRecord);
    metadata = Object.getPrototypeOf(metadata) as Metadata | null;
  }
  return records;
}
