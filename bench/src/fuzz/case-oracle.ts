// What every fuzz case must never do, checked around it: throw anything but a typed CrewlineError,
// change a built-in prototype, or leave a file outside the location it was given.
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { CrewlineError } from '@crewline/events';

export type FailureKind =
  | 'untyped error'
  | 'prototype changed'
  | 'file written outside the location'
  | 'CLI internal error'
  | 'no end'
  | 'write accepted into a database failing quick_check'
  | 'write accepted into a newer schema'
  | "write accepted into another application's database"
  | 'write left a database failing quick_check';

export interface Failure {
  kind: FailureKind;
  /** The operation it happened in (`load file`, `write`...). */
  operation: string;
  message: string;
}

/** The outcome of one operation: done, refused with a typed error (its code), or failed. */
export type OperationResult = { done: true } | { done: false; code: string } | { done: false; failed: true };

function describe(error: unknown): string {
  if (error instanceof Error) {
    const frame = error.stack?.split('\n').find((line) => line.trim().startsWith('at '));
    return `${error.name}: ${error.message.slice(0, 300)}${frame ? ` (${frame.trim()})` : ''}`;
  }
  return String(error).slice(0, 300);
}

/** Collects the failures and typed refusals of one case's operations. */
export class CaseRecorder {
  readonly failures: Failure[] = [];
  readonly codes: string[] = [];

  fail(kind: FailureKind, operation: string, message: string): void {
    this.failures.push({ kind, operation, message });
  }

  /**
   * Runs one operation: its value, or undefined when it threw. A typed CrewlineError is a refusal
   * (its code is kept); anything else is a failure. An operation that has not ended after
   * `timeoutMs` is a failure too (it may go on in the background; the case moves on).
   */
  async attempt<T>(
    operation: string,
    body: () => T | Promise<T>,
    timeoutMs = 30_000,
  ): Promise<{ value?: T; result: OperationResult }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      const value = await Promise.race([Promise.resolve().then(body), timeout]);
      if (value === 'timeout') {
        this.fail('no end', operation, `not finished after ${timeoutMs} ms`);
        return { result: { done: false, failed: true } };
      }
      return { value: value as T, result: { done: true } };
    } catch (error) {
      if (CrewlineError.isInstance(error)) {
        this.codes.push(error.code);
        return { result: { done: false, code: error.code } };
      }
      this.fail('untyped error', operation, describe(error));
      return { result: { done: false, failed: true } };
    } finally {
      clearTimeout(timer);
    }
  }
}

const watchedPrototypes: [string, object][] = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
];

type PrototypeSnapshot = Map<object, Map<PropertyKey, PropertyDescriptor>>;

/** The own properties of the built-in prototypes, to compare after a case. */
export function snapshotPrototypes(): PrototypeSnapshot {
  return new Map(
    watchedPrototypes.map(([, prototype]) => [
      prototype,
      new Map(
        Reflect.ownKeys(prototype).map((key) => [key, Reflect.getOwnPropertyDescriptor(prototype, key)!]),
      ),
    ]),
  );
}

function sameDescriptor(a: PropertyDescriptor, b: PropertyDescriptor): boolean {
  return a.value === b.value && a.get === b.get && a.set === b.set && a.writable === b.writable;
}

/**
 * What changed on the built-in prototypes since `before`, each change undone so that the next case
 * starts clean.
 */
export function prototypeChanges(before: PrototypeSnapshot): string[] {
  const changes: string[] = [];
  for (const [name, prototype] of watchedPrototypes) {
    const properties = before.get(prototype)!;
    for (const key of Reflect.ownKeys(prototype)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(prototype, key)!;
      const earlier = properties.get(key);
      if (earlier && sameDescriptor(earlier, descriptor)) continue;
      changes.push(`${name}.${String(key)} ${earlier ? 'changed' : 'added'}`);
      if (earlier) Reflect.defineProperty(prototype, key, earlier);
      else Reflect.deleteProperty(prototype, key);
    }
    for (const [key, descriptor] of properties) {
      if (Reflect.getOwnPropertyDescriptor(prototype, key)) continue;
      changes.push(`${name}.${String(key)} removed`);
      Reflect.defineProperty(prototype, key, descriptor);
    }
  }
  return changes;
}

function isInside(path: string, directory: string): boolean {
  const relation = relative(directory, path);
  return relation === '' || (!relation.startsWith('..') && !relation.startsWith(sep));
}

/**
 * Entries under `root` that are neither inside `location` nor a directory on the way to it, and any
 * of `forbidden` that exists.
 */
export function entriesOutside(root: string, location: string, forbidden: readonly string[] = []): string[] {
  const outside = existsSync(root)
    ? readdirSync(root, { recursive: true, withFileTypes: true })
        .map((entry) => join(entry.parentPath, entry.name))
        .filter((path) => !isInside(path, location) && !isInside(location, path))
    : [];
  return [...outside, ...forbidden.filter((path) => existsSync(path))];
}
