import { type BaseEvent, CrewlineError, EventBus, type LogRecord, setLogSink } from '@crewline/events';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { and, Flow, FlowMethodCallLimitError, listen, or, router, start } from './index.js';
import { CycleFlow, executions, JoinFlow, LinearFlow, LoopFlow, PassFlow } from './test-support/scenarios.js';

function recordEvents(bus: EventBus): string[] {
  const seen: string[] = [];
  bus.onAny((_source: unknown, event: BaseEvent) => {
    const methodName = (event as { methodName?: string }).methodName;
    seen.push(methodName ? `${event.type}:${methodName}` : event.type);
  });
  return seen;
}

afterEach(() => {
  executions.length = 0;
});

describe('Flow execution', () => {
  it('runs start, listen by name and listen by method reference, passing outputs along', async () => {
    const bus = new EventBus();
    const events = recordEvents(bus);
    const flow = new LinearFlow({ bus });
    const result = await flow.kickoff();
    expect(result.status).toBe('completed');
    expect(result.output).toBe('RAW-CLEAN');
    expect(result.methodName).toBe('publish');
    expect(result.state.trail).toEqual(['raw', 'raw-clean']);
    expect(result.state.total).toBe(13);
    expect(executions).toEqual(['fetch', 'clean', 'publish']);
    expect(events).toEqual([
      'flow_created',
      'flow_started',
      'method_execution_started:fetch',
      'method_execution_finished:fetch',
      'method_execution_started:clean',
      'method_execution_finished:clean',
      'method_execution_started:publish',
      'method_execution_finished:publish',
      'flow_finished',
    ]);
  });

  it('fires or() on the first of racing branches and and() once both completed', async () => {
    const flow = new JoinFlow({ bus: new EventBus() });
    const result = await flow.kickoff();
    expect(result.state.seen).toEqual(['left', 'first:L', 'right', 'both:R', 'final:B']);
    expect(executions.filter((method) => method === 'first')).toHaveLength(1);
    expect(executions.filter((method) => method === 'both')).toHaveLength(1);
    expect(result.output).toBe('left,first:L,right,both:R,final:B');
  });

  it('re-runs earlier methods in a router cycle and fires label listeners once per round', async () => {
    const flow = new CycleFlow({ bus: new EventBus() });
    const result = await flow.kickoff();
    expect(result.state.round).toBe(3);
    expect(result.state.notes).toEqual(['retry@1', 'retry@2', 'approved@3']);
    expect(result.output).toBe('published after 3 rounds');
    expect(executions).toEqual([
      'draft',
      'review',
      'note',
      'draft',
      'review',
      'note',
      'draft',
      'review',
      'note',
      'publish',
    ]);
    expect(result.state.notes).toEqual(['retry@1', 'retry@2', 'approved@3']);
  });

  it('loops through a router that listens to its own route with or(), then takes the exit route', async () => {
    const flow = new LoopFlow({ bus: new EventBus() });
    const result = await flow.kickoff();
    expect(result.status).toBe('completed');
    expect(executions).toEqual(['init', 'check', 'tick', 'check', 'tick', 'check', 'finish']);
    expect(result.state.log).toEqual(['tick@1', 'tick@2']);
    expect(result.output).toBe('finished after 3 passes');
    expect(result.methodName).toBe('finish');
  });

  it('re-runs a plain or() listener on each pass of a loop a router closes', async () => {
    class Retry extends Flow<{ attempts: number }> {
      initialState = { attempts: 0 };
      @start() begin() {
        return 'first';
      }
      @listen(or('begin', 'again')) attempt() {
        this.state.attempts += 1;
        return this.state.attempts;
      }
      @router('attempt') decide(attempts: number) {
        return attempts < 4 ? 'again' : 'done';
      }
      @listen('done') finish() {
        return `done after ${this.state.attempts} attempts`;
      }
    }
    const result = await new Retry({ bus: new EventBus() }).kickoff();
    expect(result.output).toBe('done after 4 attempts');
    expect(result.completedMethods).toEqual(['begin', 'attempt', 'decide', 'finish']);
  });

  it('joins with and() once per pass of a cycle: a branch done in an earlier pass does not count', async () => {
    const flow = new PassFlow({ bus: new EventBus() });
    const result = await flow.kickoff();
    expect(result.output).toBe('fast@1,slow@1,join@1,fast@2,slow@2,join@2,fast@3,slow@3,join@3');
    expect(executions.filter((method) => method === 'join')).toHaveLength(3);
  });

  it('runs a router every time one of its or() triggers fires, even two in the same pass', async () => {
    class Decide extends Flow<{ routed: string[] }> {
      initialState = { routed: [] as string[] };
      @start() left() {
        return 'L';
      }
      @start() async right() {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return 'R';
      }
      @router(or('left', 'right')) decide(input: string) {
        this.state.routed.push(input);
        return 'next';
      }
      @listen('next') after() {
        return this.state.routed.length;
      }
    }
    const result = await new Decide({ bus: new EventBus() }).kickoff();
    expect(result.state.routed).toEqual(['L', 'R']);
  });

  it('warns, naming the route, when a flow ends on a route no method listens to', async () => {
    const logs: LogRecord[] = [];
    setLogSink((record) => void logs.push(record));
    try {
      class Misspelled extends Flow {
        @start() @router() decide() {
          return 'aproved';
        }
        @listen('approved') publish() {
          return 'published';
        }
      }
      const result = await new Misspelled({ bus: new EventBus() }).kickoff();
      expect(result.status).toBe('completed');
      const warnings = logs.filter((record) => record.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.message).toContain('router "decide" returned the route "aproved"');
      expect(warnings[0]?.message).toContain('"approved"');
      logs.length = 0;
      // A route somebody listens to, or a flow that goes on elsewhere, is not worth a warning.
      class Fine extends Flow {
        @start() @router() decide() {
          return 'approved';
        }
        @listen('approved') publish() {
          return 'published';
        }
      }
      await new Fine({ bus: new EventBus() }).kickoff();
      expect(logs.filter((record) => record.level === 'warn')).toEqual([]);
    } finally {
      setLogSink(null);
    }
  });

  it('stops a cycle that never exits with a typed error and a method_execution_failed event', async () => {
    const bus = new EventBus();
    const events = recordEvents(bus);
    const flow = new CycleFlow({ bus, maxMethodCalls: 2, initialState: { target: 100 } });
    const failure = await flow.kickoff().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(FlowMethodCallLimitError);
    expect(CrewlineError.isInstance(failure)).toBe(true);
    expect((failure as FlowMethodCallLimitError).methodName).toBe('draft');
    expect((failure as FlowMethodCallLimitError).limit).toBe(2);
    expect(events).toContain('method_execution_failed:draft');
    expect(executions.filter((method) => method === 'draft')).toHaveLength(2);
    expect(events).not.toContain('flow_finished');
  });

  it('passes the router label to label listeners and supports a start router', async () => {
    class Triage extends Flow<{ score: number }> {
      initialState = { score: 7 };
      @start() @router() classify() {
        return this.state.score > 5 ? 'high' : 'low';
      }
      @listen('high') escalate(label: string) {
        return `escalated (${label})`;
      }
      @listen('low') ignore() {
        return 'ignored';
      }
    }
    const high = await new Triage({ bus: new EventBus() }).kickoff();
    expect(high.output).toBe('escalated (high)');
    expect(high.completedMethods).toEqual(['classify', 'escalate']);
    const low = await new Triage({ bus: new EventBus() }).kickoff({ inputs: { score: 1 } });
    expect(low.completedMethods).toEqual(['classify', 'ignore']);
  });

  it('fails the kickoff when a method throws, after the methods already running settle', async () => {
    const bus = new EventBus();
    const events = recordEvents(bus);
    class Broken extends Flow {
      @start() fast() {
        throw new Error('boom');
      }
      @start() async slow() {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return 'slow done';
      }
      @listen('slow') after() {
        return 'never';
      }
    }
    await expect(new Broken({ bus }).kickoff()).rejects.toThrow('boom');
    expect(events).toContain('method_execution_failed:fast');
    expect(events).toContain('method_execution_finished:slow');
    expect(events).not.toContain('method_execution_started:after');
  });
});

describe('Flow state', () => {
  it('has an id that is generated, or taken from inputs.id, and cannot be reassigned', async () => {
    const flow = new LinearFlow({ bus: new EventBus() });
    expect(flow.state.id).toMatch(/^[0-9a-f-]{36}$/);
    const result = await flow.kickoff({ inputs: { id: 'report-42', total: 100 } });
    expect(result.stateId).toBe('report-42');
    expect(result.state.id).toBe('report-42');
    expect(result.state.total).toBe(113);
    expect(() => {
      (flow.state as { id: string }).id = 'other';
    }).toThrow();
  });

  it('accepts initialState as a method and options.initialState overrides', async () => {
    class Counter extends Flow<{ count: number; label: string }> {
      initialState = () => ({ count: 1, label: 'class' });
      @start() bump() {
        this.state.count += 1;
        return this.state.label;
      }
    }
    const result = await new Counter({ bus: new EventBus(), initialState: { label: 'option' } }).kickoff();
    expect(result.state).toMatchObject({ count: 2, label: 'option' });
    expect(result.output).toBe('option');
  });

  it('validates and fills state with a static schema', async () => {
    const schema = z.object({ topic: z.string(), depth: z.number().int().default(2) });
    class Research extends Flow<z.infer<typeof schema>> {
      static stateSchema = schema;
      @start() plan() {
        return `${this.state.topic}:${this.state.depth}`;
      }
    }
    const result = await new Research({ bus: new EventBus() }).kickoff({ inputs: { topic: 'tides' } });
    expect(result.output).toBe('tides:2');
    expect(result.state.id).toBeTypeOf('string');
    const failure = await new Research({ bus: new EventBus() })
      .kickoff({ inputs: { depth: 'deep' } })
      .catch((error) => error);
    expect(CrewlineError.hasCode(failure, 'invalid_argument')).toBe(true);
    expect((failure as Error).message).toContain('topic');
  });
});

describe('Flow state before and across kickoffs', () => {
  it('keeps state set before kickoff and runs a flow kicked off inside another flow in the same run', async () => {
    const bus = new EventBus();
    class Inner extends Flow<{ word: string }> {
      initialState = { word: '' };
      @start() shout() {
        return this.state.word.toUpperCase();
      }
    }
    class Outer extends Flow<{ word: string; inner: string }> {
      initialState = { word: 'tide', inner: '' };
      @start() async delegate() {
        const inner = new Inner({ bus: this.bus });
        const result = await inner.kickoff({ inputs: { word: this.state.word } });
        this.state.inner = String(result.output);
        return result.output;
      }
    }
    const events = recordEvents(bus);
    const outer = new Outer({ bus });
    outer.state.word = 'surge';
    const result = await outer.kickoff();
    expect(result.state.inner).toBe('SURGE');
    expect(events.filter((type) => type === 'flow_started')).toHaveLength(2);
  });
});

describe('Flow definition errors', () => {
  it('names a listener whose trigger does not exist', async () => {
    class Typo extends Flow {
      @start() begin() {
        return 1;
      }
      @listen('begni') next() {
        return 2;
      }
    }
    await expect(new Typo({ bus: new EventBus() }).kickoff()).rejects.toThrow(/"begni" is not a flow method/);
  });

  it('refuses a method that listens to its own name before running anything (it would run again after each run)', async () => {
    let runs = 0;
    class Parity extends Flow<{ n: number }> {
      initialState = { n: 2 };
      @start() count() {
        runs += 1;
      }
      @router('count') choose() {
        return this.state.n % 2 === 0 ? 'even' : 'odd';
      }
      // Meant for the route label; its own completions fired it again, 100 paid runs.
      @listen(or('even', 'odd')) even() {
        runs += 1;
      }
    }
    const refused = await new Parity({ bus: new EventBus() }).kickoff().catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'invalid_config' });
    expect(String(refused)).toContain('method "even" listens to');
    expect(String(refused)).toContain('names the method itself');
    expect(runs).toBe(0);
  });

  it('keeps a method that lists its own name in an and(): it never runs, as before (review R4a)', async () => {
    class Audit extends Flow {
      @start() work() {
        return 'worked';
      }
      @listen(and('work', 'audit')) audit() {
        return 'audited';
      }
    }
    const result = await new Audit({ bus: new EventBus() }).kickoff();
    expect(result.status).toBe('completed');
    expect(result.completedMethods).toEqual(['work']);
  });

  it('requires a start method', async () => {
    class NoStart extends Flow {
      @listen('x') next() {
        return 2;
      }
    }
    await expect(new NoStart({ bus: new EventBus() }).kickoff()).rejects.toThrow(/has no @start\(\) method/);
  });

  it('rejects a method reference to an undecorated method', async () => {
    class Helper extends Flow {
      @start() begin() {
        return 1;
      }
      helper() {
        return 0;
      }
      @listen((flow: Helper) => flow.helper) next() {
        return 2;
      }
    }
    await expect(new Helper({ bus: new EventBus() }).kickoff()).rejects.toThrow(/not a flow step/);
  });

  it('resolves a parent method given as a function and inherits decorations', async () => {
    class Parent extends Flow<{ log: string[] }> {
      initialState = { log: [] as string[] };
      @start() begin() {
        this.state.log.push('begin');
        return 'p';
      }
    }
    class Child extends Parent {
      @listen(Parent.prototype.begin) next(input: string) {
        this.state.log.push(`next:${input}`);
        return 'c';
      }
    }
    const result = await new Child({ bus: new EventBus() }).kickoff();
    expect(result.state.log).toEqual(['begin', 'next:p']);
  });

  it('rejects empty and() and unknown kickoff options', async () => {
    expect(() => and()).toThrow(CrewlineError);
    expect(() => or()).toThrow(/at least one/);
    await expect(new LinearFlow({ bus: new EventBus() }).kickoff({ input: {} } as never)).rejects.toThrow(
      /unknown option "input"/,
    );
  });
});
