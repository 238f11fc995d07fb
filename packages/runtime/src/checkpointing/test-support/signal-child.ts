// A child process for the signal tests: a run that checkpoints on SIGINT, next to another SIGINT
// listener of the kind real programs install. Usage: signal-child.ts <listener> <provider> <location>
//   listener  exit-when-alone  a listener that ends the process only when it is the only one (what
//                              signal-exit, pulled in by Ink through restore-cursor, does)
//             user-exit        an application handler that calls process.exit(7)
//             user-ignore      an application handler that counts the signal and lets the run go on
//             none             no other listener
//   provider  sync   the JSON provider (checkpoints written inside the signal handler)
//             async  the JSON provider without synchronous writes, each write taking 300 ms
// Prints "ready" once the run is active; stops on its own after the second SIGINT (user-ignore) or
// after 10 s.
import { writeSync } from 'node:fs';
import { JsonProvider } from '@crewline/provider-json';
import type { CheckpointableEntity, CheckpointProvider } from '@crewline/runtime-state';
import { resolveCheckpointChain } from '../checkpoint-setting.js';
import { Run } from '../run.js';

const [listener, providerKind, location] = process.argv.slice(2) as [string, string, string];

function print(line: string): void {
  writeSync(1, `${line}\n`);
}

/**
 * Mimics signal-exit (v4): one listener per signal that, when it is the only listener left, runs
 * the exit hooks, removes itself and raises the signal again; with other listeners present it does
 * nothing and leaves ending the process to them. It announces how many such listeners it installed
 * where signal-exit does, on `globalThis[Symbol.for('signal-exit emitter')].count`.
 */
function installExitWhenAlone(onExit: (signal: string) => void): void {
  const emitter = { count: 1 };
  Object.defineProperty(globalThis, Symbol.for('signal-exit emitter'), { value: emitter });
  const listeners = new Map<NodeJS.Signals, () => void>();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    listeners.set(signal, () => {
      if (process.listeners(signal).length !== emitter.count) return;
      for (const [name, own] of listeners) process.removeListener(name, own);
      emitter.count -= 1;
      onExit(signal);
      process.kill(process.pid, signal);
    });
  }
  for (const [signal, own] of listeners) process.on(signal, own);
}

/** The JSON provider as a provider without synchronous writes whose writes take a while. */
function slowAsyncProvider(): CheckpointProvider {
  const json = new JsonProvider();
  return {
    kind: json.kind,
    contractVersion: json.contractVersion,
    capabilities: { ...json.capabilities, syncWrite: false },
    resolveLocation: (where) => json.resolveLocation(where),
    parseReference: (reference) => json.parseReference(reference),
    write: async (where, checkpoint) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return json.write(where, checkpoint);
    },
    read: (where, id) => json.read(where, id),
    list: (where, query) => json.list(where, query),
    latest: (where, query) => json.latest(where, query),
    prune: (where, options) => json.prune(where, options),
    delete: (where, id) => json.delete(where, id),
  };
}

let userCalls = 0;
let release: () => void = () => undefined;
const released = new Promise<void>((resolve) => {
  release = resolve;
});

// Installed before the run starts, as a program's own handlers usually are.
if (listener === 'exit-when-alone') installExitWhenAlone((signal) => print(`exit hooks ran on ${signal}`));
else if (listener === 'user-exit') {
  process.on('SIGINT', () => {
    userCalls += 1;
    print(`user handler ${userCalls}`);
    process.exit(7);
  });
} else if (listener === 'user-ignore') {
  process.on('SIGINT', () => {
    userCalls += 1;
    print(`user handler ${userCalls}`);
    if (userCalls === 2) setTimeout(release, 200);
  });
}

const entity: CheckpointableEntity = {
  entityKind: 'agent',
  entityId: 'worker',
  entityName: 'worker',
  snapshotEntity: () => ({ kind: 'agent', id: 'worker', name: 'worker', data: { working: true } }),
  summarizeEntity: () => ({ kind: 'agent', id: 'worker', name: 'worker' }),
};
const provider = providerKind === 'async' ? slowAsyncProvider() : new JsonProvider();
const config = resolveCheckpointChain([{ location, onEvents: ['SIGINT'], provider }]);

await Run.execute({ root: entity, config, inputs: {} }, async () => {
  print('ready');
  const timer = setTimeout(release, 10_000);
  await released;
  clearTimeout(timer);
});
print(`done after ${userCalls} user handler calls`);
