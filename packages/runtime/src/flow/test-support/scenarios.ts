// Flows used by the in-process tests and by the child processes of the kill tests. Every method
// records that it ran, so tests can count executions across processes.
import { and, Flow, listen, or, router, start } from '../index.js';

/** Every method execution, in order (the child process prints each as it happens). */
export const executions: string[] = [];
let executionListener: ((method: string) => void) | undefined;

export function onExecution(listener: ((method: string) => void) | undefined): void {
  executionListener = listener;
}

/** Records that a method body ran (and tells the listener). */
export function recordExecution(method: string): void {
  executions.push(method);
  executionListener?.(method);
}

const record = recordExecution;
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** start → listen by name → listen by method reference. */
export class LinearFlow extends Flow<{ trail: string[]; total: number }> {
  initialState = { trail: [] as string[], total: 0 };

  @start()
  async fetch() {
    record('fetch');
    this.state.total += 1;
    await sleep(2);
    return 'raw';
  }

  @listen('fetch')
  async clean(data: string) {
    record('clean');
    this.state.trail.push(data);
    this.state.total += 2;
    await sleep(2);
    return `${data}-clean`;
  }

  @listen((flow: LinearFlow) => flow.clean)
  async publish(data: string) {
    record('publish');
    this.state.total += 10;
    await sleep(2);
    this.state.trail.push(data);
    return data.toUpperCase();
  }
}

/** Two racing start methods, `and`, `or` and a nested condition. */
export class JoinFlow extends Flow<{ seen: string[] }> {
  initialState = { seen: [] as string[] };

  @start()
  async left() {
    record('left');
    await sleep(5);
    this.state.seen.push('left');
    return 'L';
  }

  @start()
  async right() {
    record('right');
    await sleep(25);
    this.state.seen.push('right');
    return 'R';
  }

  @listen(or('left', 'right'))
  first(input: string) {
    record('first');
    this.state.seen.push(`first:${input}`);
    return 'F';
  }

  @listen(and('left', 'right'))
  async both(input: string) {
    record('both');
    await sleep(2);
    this.state.seen.push(`both:${input}`);
    return 'B';
  }

  @listen(and(or('first', 'right'), (flow: JoinFlow) => flow.both))
  final(input: string) {
    record('final');
    this.state.seen.push(`final:${input}`);
    return this.state.seen.join(',');
  }
}

/** A router cycle: `draft` runs again while `review` routes to `retry` (through a second router). */
export class CycleFlow extends Flow<{ round: number; notes: string[]; target: number }> {
  initialState = { round: 0, notes: [] as string[], target: 3 };

  @start('redo')
  async draft() {
    record('draft');
    // Changed before the await on purpose: a kill here must not count the round twice on resume.
    this.state.round += 1;
    await sleep(3);
    return `draft-${this.state.round}`;
  }

  @router((flow: CycleFlow) => flow.draft)
  review(_draft: string) {
    record('review');
    return this.state.round < this.state.target ? 'retry' : 'approved';
  }

  @router(or('retry', 'approved'))
  note(label: string) {
    record('note');
    this.state.notes.push(`${label}@${this.state.round}`);
    return label === 'retry' ? 'redo' : 'finalize';
  }

  @listen('finalize')
  async publish(_label: string) {
    record('publish');
    await sleep(2);
    return `published after ${this.state.round} rounds`;
  }
}

/**
 * The loop users write in crewAI: a router that listens to its own route (`or('init', 'again')`)
 * and decides each pass whether to go round again.
 */
export class LoopFlow extends Flow<{ count: number; target: number; log: string[] }> {
  initialState = { count: 0, target: 3, log: [] as string[] };

  @start()
  init() {
    record('init');
    return 'ready';
  }

  // Declared before the router, so it runs before the next pass starts.
  @listen('again')
  tick() {
    record('tick');
    this.state.log.push(`tick@${this.state.count}`);
  }

  @router(or('init', 'again'))
  async check() {
    record('check');
    await sleep(1);
    // After the await: `tick` of the previous pass completes (and is saved) while this runs.
    this.state.count += 1;
    return this.state.count < this.state.target ? 'again' : 'done';
  }

  @listen('done')
  finish() {
    record('finish');
    return `finished after ${this.state.count} passes`;
  }
}

/**
 * Each pass fans out to two branches and joins them with `and()`: the join must wait for both
 * branches of the same pass (a branch completed in an earlier pass does not count).
 */
export class PassFlow extends Flow<{ passes: number; log: string[] }> {
  initialState = { passes: 0, log: [] as string[] };

  @start('again')
  begin() {
    record('begin');
    this.state.passes += 1;
    return this.state.passes;
  }

  @listen('begin')
  async fast(pass: number) {
    record('fast');
    await sleep(1);
    this.state.log.push(`fast@${pass}`);
  }

  @listen('begin')
  async slow(pass: number) {
    record('slow');
    await sleep(15);
    this.state.log.push(`slow@${pass}`);
  }

  @router(and('fast', 'slow'))
  join() {
    record('join');
    this.state.log.push(`join@${this.state.passes}`);
    return this.state.passes < 3 ? 'again' : 'done';
  }

  @listen('done')
  finish() {
    record('finish');
    return this.state.log.join(',');
  }
}

export const scenarios = { LinearFlow, JoinFlow, CycleFlow, LoopFlow, PassFlow } as const;
export type ScenarioName = keyof typeof scenarios;
