import { methodScope } from './method-scope.js';
import type { Activation } from './run-progress.js';

/**
 * Which top-level fields of a flow's state each method execution has used (read or set), so that
 * the state saved when one method completes can leave out what others that have not completed
 * changed: methods that run at the same time share one state object, and only their own fields say
 * whose change is whose. A field is a top-level key of the state, whatever depth the change was made
 * at (`this.state.items.push(x)` reads `items`).
 *
 * The fields become accessors on the state object rather than the state a proxy: a proxy cannot be
 * copied by `structuredClone`, which a method may well do to its state.
 */
export class StateFieldUse {
  readonly #flow: object;
  /** Fields used per execution (by activation id) that has not completed. */
  readonly #used = new Map<number, Set<string>>();

  /** `flow`: the flow instance whose method executions are told apart (compared by identity). */
  constructor(flow: object) {
    this.#flow = flow;
  }

  /** Makes each field of `state` (but `id`, which never changes) note the executions that use it. */
  watch(state: Record<string, unknown>): void {
    for (const key of Object.keys(state)) {
      if (key === 'id') continue;
      let current = state[key];
      Object.defineProperty(state, key, {
        get: () => {
          this.#note(key);
          return current;
        },
        set: (value: unknown) => {
          this.#note(key);
          current = value;
        },
        enumerable: true,
        configurable: true,
      });
    }
    // Logged, the state shows its values, not a `[Getter/Setter]` for each field.
    Object.defineProperty(state, Symbol.for('nodejs.util.inspect.custom'), {
      value(this: Record<string, unknown>) {
        return { ...this };
      },
      enumerable: false,
      configurable: true,
    });
  }

  /**
   * The fields whose saved value stays when `completed` completes: those used by `unfinished`
   * executions (running, paused, or failed) and not by `completed` itself. A field both used is
   * saved as it is: `completed` may have changed it, and what it changed is kept.
   */
  heldBack(completed: Activation, unfinished: readonly Activation[]): Set<string> {
    const own = this.#used.get(completed.id);
    this.#used.delete(completed.id);
    const held = new Set<string>();
    for (const activation of unfinished) {
      for (const field of this.#used.get(activation.id) ?? []) if (!own?.has(field)) held.add(field);
    }
    return held;
  }

  /** Forgets every execution (a new run starts; what did not complete before is rolled back). */
  clear(): void {
    this.#used.clear();
  }

  #note(key: string): void {
    const scope = methodScope.getStore();
    if (scope?.flow !== this.#flow) return;
    const id = scope.activation.id;
    let used = this.#used.get(id);
    if (!used) {
      used = new Set();
      this.#used.set(id, used);
    }
    used.add(key);
  }
}
