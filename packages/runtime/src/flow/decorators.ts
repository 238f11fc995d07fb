// flow-metadata.ts defines `Symbol.metadata` on Node 20; importing it first makes that happen before
// any class decorated with these functions is evaluated.
import { type ConditionInput, isFlowCondition } from './conditions.js';
import { flowError } from './errors.js';
import { ownRecord, type PersistOptions, recordMethod } from './flow-metadata.js';

/** A decorator for a flow method (TC39 standard decorators). */
export type FlowMethodDecorator = <This, Value extends (this: This, ...args: any[]) => unknown>(
  value: Value,
  context: ClassMethodDecoratorContext<This, Value>,
) => void;

/** A decorator that goes on a flow class or on one of its methods. */
export type FlowClassOrMethodDecorator = (
  value: unknown,
  context: ClassDecoratorContext | ClassMethodDecoratorContext,
) => void;

function checkCondition(decorator: string, condition: unknown): ConditionInput {
  if (typeof condition === 'string') {
    if (condition.length === 0)
      throw flowError('invalid_argument', `${decorator}(''): give a method name or route label`);
    return condition;
  }
  if (typeof condition === 'function' || isFlowCondition(condition)) return condition as ConditionInput;
  throw flowError(
    'invalid_argument',
    `${decorator}() takes a method name, a route label, a method reference such as (flow: MyFlow) => flow.step, or and(...)/or(...); got ${typeof condition}`,
  );
}

/**
 * Marks an entry point: start methods run when the flow is kicked off (all of them, concurrently).
 * With a condition the method also listens, which is how a cycle re-enters a start method:
 * `@start('retry')` runs at kickoff and whenever a router returns `'retry'`.
 */
export function start(condition?: ConditionInput): FlowMethodDecorator {
  const trigger = condition === undefined ? undefined : checkCondition('start', condition);
  return (value, context) => {
    recordMethod(context as ClassMethodDecoratorContext, value as never, (spec) => {
      spec.start = true;
      if (trigger !== undefined) spec.trigger = trigger;
    });
  };
}

/**
 * Runs the method when `condition` is met: a method completed (`listen('fetch')` or
 * `listen((flow: MyFlow) => flow.fetch)`), a router returned a label (`listen('approved')`), or a
 * combination (`listen(and('a', 'b'))`, `listen(or('a', 'b'))`). The method receives the output of
 * the method that completed last among its triggers (for a route label: the label).
 */
export function listen(condition: ConditionInput): FlowMethodDecorator {
  const trigger = checkCondition('listen', condition);
  return (value, context) => {
    recordMethod(context as ClassMethodDecoratorContext, value as never, (spec) => {
      spec.trigger = trigger;
    });
  };
}

/**
 * Makes the method a router: it runs when `condition` is met (like {@link listen}) and returns a route
 * label; methods that `listen('<label>')` run next. A router is a decision point: it runs every time
 * one of its triggers (or one alternative of an `or()`) completes, including a route it returned
 * itself, which is how loops are written: `@router(or('init', 'again'))` returning `'again'`. Combine
 * with `@start()` (and no condition) for a router that runs at kickoff. Return `undefined` to take no
 * route.
 */
export function router(condition?: ConditionInput): FlowMethodDecorator {
  const trigger = condition === undefined ? undefined : checkCondition('router', condition);
  return (value, context) => {
    recordMethod(context as ClassMethodDecoratorContext, value as never, (spec) => {
      spec.router = true;
      if (trigger !== undefined) spec.trigger = trigger;
    });
  };
}

/**
 * Saves the flow's state after each completed method (on a class: every method; on a method: that
 * one), keyed by `state.id`, as checkpoints through the same provider as checkpointing. Kicking off
 * again with `inputs: { id }` restores that state and skips the methods that already completed.
 * A paused flow is always saved. Writes go where the flow checkpoints, else to `options.location`.
 */
export function persist(options: PersistOptions = {}): FlowClassOrMethodDecorator {
  if (options === null || typeof options !== 'object') {
    throw flowError(
      'invalid_argument',
      'persist() takes an options object ({ location?, provider? }) or nothing',
    );
  }
  for (const key of Object.keys(options)) {
    if (key !== 'location' && key !== 'provider') {
      throw flowError(
        'invalid_argument',
        `persist(): unknown option "${key}"; persistence is always keyed by state.id and accepts { location, provider }`,
      );
    }
  }
  return (value, context) => {
    if (context.kind === 'class') {
      ownRecord(context.metadata).persistClass = { ...options };
      return;
    }
    if (context.kind === 'method') {
      const record = ownRecord(context.metadata);
      if (Object.keys(options).length > 0) record.persistMethodOptions ??= { ...options };
      recordMethod(context, value as never, (spec) => {
        spec.persisted = true;
      });
      return;
    }
    throw flowError(
      'invalid_config',
      `@persist() goes on a flow class or a flow method, not on a ${(context as { kind: string }).kind}`,
    );
  };
}
