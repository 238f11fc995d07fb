import { EventBus, type LogRecord, setLogSink } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { defineConfig, registerProject } from '../project-config/project-config.js';
import { Flow, listen, start } from './index.js';

// What the value codec says (a resume from an earlier checkpoint also logs that it branches off).
const logs: LogRecord[] = [];
setLogSink((record) => {
  if (record.component === 'value-codec') logs.push(record);
});
afterEach(() => {
  logs.length = 0;
});

class Money {
  constructor(
    readonly cents: number,
    readonly currency = 'EUR',
  ) {}
  format(): string {
    return `${(this.cents / 100).toFixed(2)} ${this.currency}`;
  }
}

class Shop extends Flow<{ price: Money | null; history: Money[] }> {
  initialState = { price: null as Money | null, history: [] as Money[] };

  @start() quote() {
    this.state.price = new Money(250);
    this.state.history.push(new Money(199));
    return new Money(100);
  }

  @listen('quote') charge(fee: Money) {
    const price = this.state.price as Money;
    return `${fee.format()} + ${price.format()} (was ${this.state.history[0]?.format()})`;
  }
}

async function resumeAfterQuote(): Promise<string> {
  const provider = new InMemoryProvider();
  await new Shop({
    bus: new EventBus(),
    checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
  }).kickoff();
  const [afterQuote] = await provider.list('mem');
  const restored = await Shop.fromCheckpoint(
    { restoreFrom: `mem#${afterQuote?.id}`, provider },
    { bus: new EventBus() },
  );
  expect(restored.state.price).toBeInstanceOf(Money);
  return (await restored.kickoff()).output as string;
}

describe('classes in flow state and method outputs', () => {
  it('are restored as instances once registered (classes in crewline.config.ts), warned about before', async () => {
    // Not registered: the state comes back as plain objects; the write said so, once per class.
    const unregistered = resumeAfterQuote();
    await expect(unregistered).rejects.toThrow();
    const warnings = logs.filter((record) => record.level === 'warn');
    expect(warnings.map((record) => record.message)).toEqual([
      expect.stringContaining('an instance of class Money is stored as a plain object'),
    ]);
    expect(warnings[0]?.message).toContain('defineConfig({ classes: [Money] })');

    logs.length = 0;
    registerProject(defineConfig({ classes: [Money] }));
    expect(await resumeAfterQuote()).toBe('1.00 EUR + 2.50 EUR (was 1.99 EUR)');
    expect(logs.filter((record) => record.level === 'warn')).toEqual([]);
  });

  it('keeps what a flow method returns from crew.kickoff() a CrewOutput', async () => {
    const { CrewOutput } = await import('../crew/crew-output.js');
    class Report extends Flow {
      @start() run() {
        return new CrewOutput([], { inputTokens: 0, outputTokens: 0, totalTokens: 0 } as never);
      }
      @listen('run') read(output: InstanceType<typeof CrewOutput>) {
        return output instanceof CrewOutput;
      }
    }
    const provider = new InMemoryProvider();
    await new Report({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const [afterRun] = await provider.list('mem');
    const restored = await Report.fromCheckpoint(
      { restoreFrom: `mem#${afterRun?.id}`, provider },
      { bus: new EventBus() },
    );
    expect((await restored.kickoff()).output).toBe(true);
    expect(logs.filter((record) => record.level === 'warn')).toEqual([]);
  });

  it('refuses a classes entry that is not a list', () => {
    expect(() => registerProject({ classes: Money as never })).toThrow(
      /project config: classes: must be an array/,
    );
  });
});
