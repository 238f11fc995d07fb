import {
  type ConditionInput,
  conditionNames,
  describeCondition,
  isFlowCondition,
  type ResolvedCondition,
  satisfiedBy,
} from './conditions.js';
import { flowError } from './errors.js';
import { classRecords, type MethodSpec, type PersistOptions } from './flow-metadata.js';

/** One step of a flow as the engine runs it. */
export interface FlowNode {
  name: string;
  order: number;
  start: boolean;
  router: boolean;
  trigger: ResolvedCondition | undefined;
  persisted: boolean;
}

/** The resolved structure of a flow class: computed once per class. */
export interface FlowGraph {
  nodes: Map<string, FlowNode>;
  /** Start methods in declaration order. */
  starts: string[];
  /** Listeners (and routers) by each name their condition mentions, in declaration order. */
  listenersByName: Map<string, FlowNode[]>;
  /**
   * Per method, the methods its completion can lead to (transitively, itself included when it is on
   * a cycle): through listeners of its name and, for a router, through listeners of route labels.
   */
  downstream: Map<string, Set<string>>;
  /** Some method is persisted (or the whole class is). */
  persisted: boolean;
  persistOptions: PersistOptions | undefined;
}

type FlowClass = abstract new (...args: never[]) => unknown;

const graphs = new WeakMap<FlowClass, FlowGraph>();
const referenceMarker = Symbol('crewline.flow.reference');

/** The graph of a flow class (cached). Throws a `[flow]` error naming what is wrong with the class. */
export function flowGraph(flowClass: FlowClass, flowName: string): FlowGraph {
  const cached = graphs.get(flowClass);
  if (cached) return cached;
  const graph = buildGraph(flowClass, flowName);
  graphs.set(flowClass, graph);
  return graph;
}

function buildGraph(flowClass: FlowClass, flowName: string): FlowGraph {
  const records = classRecords(flowClass);
  const specs = new Map<string, MethodSpec>();
  let persistClass: PersistOptions | undefined;
  let persistMethodOptions: PersistOptions | undefined;
  for (const record of records) {
    for (const [name, spec] of record.methods) specs.set(name, spec);
    if (record.persistClass) persistClass = record.persistClass;
    persistMethodOptions = record.persistMethodOptions ?? persistMethodOptions;
  }
  const prototype = flowClass.prototype as Record<string, unknown>;
  const nodes = new Map<string, FlowNode>();
  const ordered = [...specs.values()].sort((a, b) => a.order - b.order);
  for (const spec of ordered) {
    if (typeof prototype[spec.name] !== 'function') {
      throw flowError(
        'invalid_config',
        `flow "${flowName}": "${spec.name}" is decorated but is not a method of the class`,
      );
    }
    const trigger =
      spec.trigger === undefined
        ? undefined
        : resolveCondition(spec.trigger, flowClass, specs, flowName, spec.name);
    if (!spec.start && trigger === undefined) {
      const what = spec.router
        ? 'router() without a condition must also be @start()'
        : 'it has @persist() but no @start(), @listen() or @router()';
      throw flowError('invalid_config', `flow "${flowName}": method "${spec.name}" never runs: ${what}`);
    }
    nodes.set(spec.name, {
      name: spec.name,
      order: spec.order,
      start: spec.start,
      router: spec.router,
      trigger,
      persisted: persistClass !== undefined || spec.persisted,
    });
  }
  const starts = [...nodes.values()].filter((node) => node.start).map((node) => node.name);
  if (starts.length === 0) {
    throw flowError(
      'invalid_config',
      `flow "${flowName}" has no @start() method; decorate the method that should run first with @start()`,
    );
  }
  const hasRouter = [...nodes.values()].some((node) => node.router);
  const listenersByName = new Map<string, FlowNode[]>();
  for (const node of nodes.values()) {
    if (!node.trigger) continue;
    for (const name of conditionNames(node.trigger)) {
      // Every completion of a method fires the listeners of its name: a condition its own name alone
      // satisfies (a route label spelled like the method, say; alone or in an or()) runs it again
      // after each run, paid calls and all, until maxMethodCalls stops the flow. (In an and(), it can
      // only keep the method from running, as before.)
      if (name === node.name && satisfiedBy(node.trigger, node.name)) {
        throw flowError(
          'invalid_config',
          `flow "${flowName}": method "${node.name}" listens to ${describeCondition(node.trigger)}, which names the method itself: each of its completions would run it again, until maxMethodCalls stops the flow; give the method or the route label it listens to another name`,
        );
      }
      if (!nodes.has(name) && !hasRouter) {
        throw flowError(
          'invalid_config',
          `flow "${flowName}": method "${node.name}" listens to ${describeCondition(node.trigger)}, but "${name}" is not a flow method and the flow has no router that could return it as a label; check the spelling`,
        );
      }
      const listeners = listenersByName.get(name) ?? [];
      listeners.push(node);
      listenersByName.set(name, listeners);
    }
  }
  return {
    nodes,
    starts,
    listenersByName,
    downstream: downstreamMethods(nodes, listenersByName),
    persisted: [...nodes.values()].some((node) => node.persisted),
    persistOptions: persistClass ?? persistMethodOptions,
  };
}

function downstreamMethods(
  nodes: Map<string, FlowNode>,
  listenersByName: Map<string, FlowNode[]>,
): Map<string, Set<string>> {
  // A router may return any label, so it leads to every listener of a name that is not a method.
  const labelListeners = new Set<string>();
  for (const [name, listeners] of listenersByName)
    if (!nodes.has(name)) for (const listener of listeners) labelListeners.add(listener.name);
  const direct = new Map<string, Set<string>>();
  for (const node of nodes.values()) {
    const next = new Set((listenersByName.get(node.name) ?? []).map((listener) => listener.name));
    if (node.router) for (const name of labelListeners) next.add(name);
    direct.set(node.name, next);
  }
  const downstream = new Map<string, Set<string>>();
  for (const name of nodes.keys()) {
    const seen = new Set<string>();
    const queue = [...(direct.get(name) ?? [])];
    while (queue.length > 0) {
      const current = queue.pop() as string;
      if (seen.has(current)) continue;
      seen.add(current);
      queue.push(...(direct.get(current) ?? []));
    }
    downstream.set(name, seen);
  }
  return downstream;
}

function resolveCondition(
  input: ConditionInput,
  flowClass: FlowClass,
  specs: Map<string, MethodSpec>,
  flowName: string,
  methodName: string,
): ResolvedCondition {
  if (typeof input === 'string') return { kind: 'name', name: input };
  if (isFlowCondition(input)) {
    return {
      kind: input.kind,
      conditions: input.conditions.map((inner) =>
        resolveCondition(inner, flowClass, specs, flowName, methodName),
      ),
    };
  }
  return { kind: 'name', name: resolveReference(input, flowClass, specs, flowName, methodName) };
}

/**
 * A method given as a function: either the method itself (found by identity on the class) or an
 * accessor like `(flow: MyFlow) => flow.fetch`, which is called with a stand-in that records the
 * property it reads — no flow instance is created and no method runs.
 */
function resolveReference(
  reference: (flow: any) => unknown,
  flowClass: FlowClass,
  specs: Map<string, MethodSpec>,
  flowName: string,
  methodName: string,
): string {
  for (const spec of specs.values()) if (spec.implementation === reference) return spec.name;
  let prototype: object | null = flowClass.prototype as object;
  while (prototype && prototype !== Object.prototype) {
    for (const key of Object.getOwnPropertyNames(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
      if (descriptor && 'value' in descriptor && descriptor.value === reference && key !== 'constructor') {
        return requireStep(key, specs, flowName, methodName);
      }
    }
    prototype = Object.getPrototypeOf(prototype) as object | null;
  }
  const recorder = new Proxy(
    {},
    {
      get: (_target, key) => (typeof key === 'string' ? { [referenceMarker]: key } : undefined),
    },
  );
  let read: unknown;
  try {
    read = reference(recorder);
  } catch (error) {
    throw flowError(
      'invalid_config',
      `flow "${flowName}": the method reference given to "${methodName}" could not be read; write it as (flow: ${flowName}) => flow.methodName`,
      { cause: error },
    );
  }
  const name = (read as Record<symbol, unknown> | undefined)?.[referenceMarker];
  if (typeof name !== 'string') {
    throw flowError(
      'invalid_config',
      `flow "${flowName}": the function given to "${methodName}" is not a method of the flow; pass a name ('step'), the method, or (flow: ${flowName}) => flow.step`,
    );
  }
  return requireStep(name, specs, flowName, methodName);
}

function requireStep(
  name: string,
  specs: Map<string, MethodSpec>,
  flowName: string,
  methodName: string,
): string {
  if (specs.has(name)) return name;
  throw flowError(
    'invalid_config',
    `flow "${flowName}": "${methodName}" listens to flow.${name}, which is not a flow step (no @start(), @listen() or @router()), so it would never fire`,
  );
}
