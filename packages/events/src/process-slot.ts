/**
 * One value per process, shared by every copy of `@crewline/events` that a process loads. An install
 * can hold two copies (a project asks for a newer version than a crewline package was built with, a
 * bundle inlines one, a monorepo hoists differently): each copy runs its own module code, but
 * `Symbol.for` returns the same symbol in all of them, so a value kept on `globalThis` under it is
 * found by every copy. The key names the shape's version: a copy that expects another shape uses
 * another key and keeps its own value instead of misreading this one.
 */
export function processSlot<T>(key: string, create: () => T): T {
  const slot = Symbol.for(key);
  const holder = globalThis as Record<symbol, unknown>;
  if (!(slot in holder)) {
    // Not enumerable, not writable: nothing replaces the value once a copy has put it there.
    Object.defineProperty(holder, slot, { value: create(), enumerable: false, writable: false });
  }
  return holder[slot] as T;
}
