// A child process for the cross-process tests of a `@persist()` flow's state (persisted-state-claim
// .test.ts): it kicks off one state id of a four-method flow that saves after each method and reports
// on stdout, one JSON object per line: {"ready": true} once loaded, {"exec": method} as each method
// body starts (the work a real flow pays for), then {"result": ...} or {"error": {code, message}}.
// Usage: persisted-state-child.ts <location> <state id> <options as JSON>
//   config   also give the flow a checkpoint config at the same location (writing on each method)
//   barrier  a file to wait for before the kickoff (two children then kick off at the same moment)
//   gate     { method, file }: that method waits for the file before it returns
//   nested   kick the state off inside a method of another flow (Desk, not persisted, no config);
//            the store then also reports {"released": lineage id} as a lease is given up
import { existsSync, writeSync } from 'node:fs';
import { CrewlineError } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { CheckpointProvider, LeaseToken } from '@crewline/runtime-state';
import { Flow, listen, persist, start } from '../index.js';

interface ChildOptions {
  config?: boolean;
  barrier?: string;
  gate?: { method: string; file: string };
  nested?: boolean;
}

const [location = '', stateId = '', optionsText = '{}'] = process.argv.slice(2);
const options = JSON.parse(optionsText) as ChildOptions;

/** The store the location calls for, saying on stdout which lease it gave up (a Ctrl+C's release). */
function reportingStore(): CheckpointProvider {
  const store: CheckpointProvider = location.endsWith('.db') ? new SqliteProvider() : new JsonProvider();
  const release = store.releaseLease!.bind(store);
  store.releaseLease = async (at: string, token: LeaseToken) => {
    await release(at, token);
    report({ released: token.lineageId });
  };
  return store;
}

function report(value: unknown): void {
  writeSync(1, `${JSON.stringify(value)}\n`);
}

async function until(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 10));
}

async function work(method: string): Promise<void> {
  report({ exec: method });
  if (options.gate?.method === method) await until(options.gate.file);
}

@persist({ location, ...(options.nested ? { provider: reportingStore() } : {}) })
class Ledger extends Flow<{ id?: string; steps: string[] }> {
  initialState = { steps: [] as string[] };

  @start() async first() {
    await work('first');
    this.state.steps.push('first');
    return 1;
  }

  @listen('first') async second(value: number) {
    await work('second');
    this.state.steps.push('second');
    return value + 1;
  }

  @listen('second') async third(value: number) {
    await work('third');
    this.state.steps.push('third');
    return value + 1;
  }

  @listen('third') async fourth(value: number) {
    await work('fourth');
    this.state.steps.push('fourth');
    return value + 1;
  }
}

/** A flow whose one method kicks the state off (the `nested` option). */
class Desk extends Flow<{ result?: { status: string; output: unknown; steps: string[] } }> {
  @start() async delegate() {
    const result = await new Ledger().kickoff({ inputs: { id: stateId } });
    this.state.result = { status: result.status, output: result.output, steps: result.state.steps };
  }
}

const flow = new Ledger(
  options.config ? { checkpoint: { location, onEvents: ['method_execution_finished'] } } : {},
);
report({ ready: true });
if (options.barrier !== undefined) await until(options.barrier);
try {
  if (options.nested) {
    report({ result: (await new Desk().kickoff()).state.result });
  } else {
    const result = await flow.kickoff({ inputs: { id: stateId } });
    report({ result: { status: result.status, output: result.output, steps: result.state.steps } });
  }
} catch (error) {
  report({
    error: {
      code: CrewlineError.isInstance(error) ? error.code : 'unknown',
      message: error instanceof Error ? error.message : String(error),
    },
  });
}
