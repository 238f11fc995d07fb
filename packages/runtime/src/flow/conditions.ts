import { flowError } from './errors.js';

/**
 * A method reference: a function that reads the method off the flow, `(flow: MyFlow) => flow.fetch`
 * (type-checked and renamed with the method, evaluated lazily so it may name methods declared
 * later), or the method function itself (`ParentFlow.prototype.fetch`).
 */
export type MethodReference = (flow: any) => unknown;

/**
 * What a listener or router waits for: a method name or route label, a method reference, or
 * `and(...)` / `or(...)` of those (nestable).
 */
export type ConditionInput = string | MethodReference | FlowCondition;

/** A combined condition made by {@link and} or {@link or}. */
export interface FlowCondition {
  readonly kind: 'and' | 'or';
  readonly conditions: readonly ConditionInput[];
}

const conditionBrand = Symbol.for('crewline.flow.condition');

function combine(kind: 'and' | 'or', conditions: ConditionInput[]): FlowCondition {
  if (conditions.length === 0) {
    throw flowError(
      'invalid_argument',
      `${kind}() needs at least one method name, route label or method reference`,
    );
  }
  const condition = { kind, conditions: Object.freeze([...conditions]) };
  Object.defineProperty(condition, conditionBrand, { value: true });
  return Object.freeze(condition);
}

/** Fires once every listed method (or route) has completed; again once all of them completed again. */
export function and(...conditions: ConditionInput[]): FlowCondition {
  return combine('and', conditions);
}

/** Fires on the first of the listed methods (or routes) to complete; again when one completes again in a later round. */
export function or(...conditions: ConditionInput[]): FlowCondition {
  return combine('or', conditions);
}

export function isFlowCondition(value: unknown): value is FlowCondition {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[conditionBrand] === true
  );
}

/** A condition with every reference resolved to a method name or route label. */
export type ResolvedCondition =
  | { kind: 'name'; name: string }
  | { kind: 'and' | 'or'; conditions: ResolvedCondition[] };

/** Every name a resolved condition mentions. */
export function conditionNames(condition: ResolvedCondition, into: Set<string> = new Set()): Set<string> {
  if (condition.kind === 'name') into.add(condition.name);
  else for (const inner of condition.conditions) conditionNames(inner, into);
  return into;
}

/**
 * How many "rounds" of a condition are complete, given how often each name has completed: a name
 * counts its completions, `or` the most of its parts, `and` the fewest. A listener fires when this
 * number grows past the rounds it already fired for, which gives "all of them" for `and`, "the first
 * of them" for `or`, and makes both fire again when a cycle runs their triggers again.
 */
export function completedRounds(
  condition: ResolvedCondition,
  completions: ReadonlyMap<string, number>,
): number {
  if (condition.kind === 'name') return completions.get(condition.name) ?? 0;
  const rounds = condition.conditions.map((inner) => completedRounds(inner, completions));
  return condition.kind === 'and' ? Math.min(...rounds) : Math.max(...rounds);
}

/** `a`, `and(a, or(b, c))`: for messages. */
export function describeCondition(condition: ResolvedCondition): string {
  if (condition.kind === 'name') return JSON.stringify(condition.name);
  return `${condition.kind}(${condition.conditions.map(describeCondition).join(', ')})`;
}
