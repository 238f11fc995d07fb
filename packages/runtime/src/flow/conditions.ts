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
 * The round a condition has reached, given the latest round each name completed in: a name gives its
 * latest round, `or` the highest of its parts, `and` the lowest. Every execution belongs to a round:
 * the first pass is round 1, and when a cycle runs a method again, that execution and everything it
 * triggers belong to a later round. A listener fires when its condition reaches a round it has not
 * fired for: `listen(x)` after every completion of x, `or(...)` on the first completion among its
 * triggers in a round (parallel branches racing in one round fire it once), `and(...)` once every
 * trigger has completed in that round.
 */
export function conditionRound(
  condition: ResolvedCondition,
  latestRounds: ReadonlyMap<string, number>,
): number {
  if (condition.kind === 'name') return latestRounds.get(condition.name) ?? 0;
  const rounds = condition.conditions.map((inner) => conditionRound(inner, latestRounds));
  return condition.kind === 'and' ? Math.min(...rounds) : Math.max(...rounds);
}

/**
 * Whether a completion of `name` alone satisfies the condition (it is the condition, or an
 * alternative of an `or`): a router runs on every such completion. Inside an `and`, one name is
 * never enough: the other parts must complete again first.
 */
export function satisfiedBy(condition: ResolvedCondition, name: string): boolean {
  if (condition.kind === 'name') return condition.name === name;
  if (condition.kind === 'or') return condition.conditions.some((inner) => satisfiedBy(inner, name));
  return false;
}

/** `a`, `and(a, or(b, c))`: for messages. */
export function describeCondition(condition: ResolvedCondition): string {
  if (condition.kind === 'name') return JSON.stringify(condition.name);
  return `${condition.kind}(${condition.conditions.map(describeCondition).join(', ')})`;
}
