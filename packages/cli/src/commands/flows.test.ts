import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, persist, registerProject, start } from '@crewline/runtime';
import { captureLogs } from '@crewline/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FixtureKind, providerOf } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

/** Every method execution of the flows below, as `<kind>:<method>`. */
const calls: string[] = [];

/** A persisted flow named `OrderFlow-<kind>`: each provider's run registers its own class. */
function orderFlow(location: string, provider: Awaited<ReturnType<typeof providerOf>>, kind: FixtureKind) {
  @persist({ location, provider })
  class OrderFlow extends Flow<{ items: number; note?: string }> {
    static flowName = `OrderFlow-${kind}`;
    initialState = { items: 0 };

    @start() receive() {
      calls.push(`${kind}:receive`);
      this.state.items += 2;
      return this.state.items;
    }

    @listen('receive') confirm(items: number) {
      calls.push(`${kind}:confirm`);
      this.state.note = `confirmed {not a placeholder} ${items}`;
      return this.state.note;
    }
  }
  return OrderFlow;
}

/** A flow checkpointed without `@persist`: its runs are no persisted states. */
class PlainFlow extends Flow<{ items: number }> {
  initialState = { items: 0 };

  @start() count() {
    this.state.items += 1;
    return this.state.items;
  }
}

describe.each<FixtureKind>(['json', 'sqlite'])('flows over %s', (kind) => {
  let project: { path: string; remove: () => Promise<void> };
  let provider: Awaited<ReturnType<typeof providerOf>>;
  let OrderFlow: ReturnType<typeof orderFlow>;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory();
    provider = await providerOf(kind);
    const location = join(project.path, kind === 'json' ? '.checkpoints' : '.checkpoints.db');
    OrderFlow = orderFlow(location, provider, kind);
    // First, so that the latest checkpoint (what a bare `resume` takes) is still a persisted state's.
    await new PlainFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    await new OrderFlow({ bus: new EventBus() }).kickoff({ inputs: { id: 'order-1' } });
    await new OrderFlow({ bus: new EventBus() }).kickoff({ inputs: { id: 'order-2' } });
  });
  afterAll(async () => {
    await provider?.close?.();
    await project.remove();
  });

  it('lists persisted flow state ids with flow name, last method and time', async () => {
    const result = await crewline('checkpoint', 'flows');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^2 flow states in \.\/\.checkpoints(\.db)? \((json|sqlite)\), newest first$/);
    const order2 = lines.findIndex((line) => line.startsWith('order-2'));
    const order1 = lines.findIndex((line) => line.startsWith('order-1'));
    expect(order2).toBeGreaterThan(0);
    expect(order1).toBeGreaterThan(order2);
    expect(lines[order1]).toMatch(new RegExp(`^order-1\\s+OrderFlow-${kind}\\s+confirm\\s+completed\\s`));
    const json = JSON.parse((await crewline('states', '--json')).stdout) as {
      states: { id: string; lastMethod: string }[];
    };
    expect(json.states.map((state) => state.id).sort()).toEqual(['order-1', 'order-2']);
  });

  it('leaves out flows checkpointed without @persist, with the hint that continues them', async () => {
    const result = await crewline('checkpoint', 'flows');
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('PlainFlow');
    expect(result.stdout).toContain(
      '1 run of a flow checkpointed without @persist is not listed: crewline checkpoint list shows its checkpoints; continue one with crewline checkpoint resume <checkpoint id>.',
    );
    const only = await crewline('checkpoint', 'flows', '--flow', 'PlainFlow');
    expect(only.stdout).toMatch(/^No @persist flow states in /);
    expect(only.stdout).not.toContain('flow.kickoff');
    expect(only.stdout).toContain('crewline checkpoint resume <checkpoint id>');
  });

  it('resume of a flow needs its class registered; registered, it continues', async () => {
    const unregistered = await crewline('resume');
    expect(unregistered.code).toBe(6);
    expect(unregistered.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(unregistered.stderr).toMatch(/OrderFlow.*crewline\.config\.ts/);
    registerProject({ flows: { [`OrderFlow-${kind}`]: OrderFlow } });
    const registered = await crewline('resume');
    expect(registered.stderr).toBe('');
    expect(registered.code).toBe(0);
    expect(registered.stdout).toContain(`Finished flow OrderFlow-${kind}`);
  });

  it('flows rerun <id> --from <method> runs that method and what follows, not the methods before it', async () => {
    registerProject({ flows: { [`OrderFlow-${kind}`]: OrderFlow } });
    calls.length = 0;
    const logs = captureLogs();
    const result = await crewline('checkpoint', 'flows', 'rerun', 'order-1', '--from', 'confirm').finally(
      () => logs.stop({ allowUnexpected: true }),
    );
    expect(result.stderr).toBe('');
    // Re-running from an earlier save continues on a new branch because it asks to: not warned about
    // (trial: the warning came beside the command's own "forked onto branch").
    expect(logs.records.filter((record) => record.message.includes('is not the latest of its run'))).toEqual(
      [],
    );
    expect(logs.unexpected()).toEqual([]);
    expect(result.code).toBe(0);
    expect(calls).toEqual([`${kind}:confirm`]);
    expect(result.stdout).toContain('Re-running flow state order-1 from confirm');
    expect(result.stdout).toContain('(completed: receive)');
    expect(result.stdout).toContain('confirmed {not a placeholder} 2');
    // Still a persisted state, though its latest save is on the rerun's own branch.
    const listed = await crewline('checkpoint', 'flows', '--json');
    const states = (JSON.parse(listed.stdout) as { states: { id: string; branch: string }[] }).states;
    expect(states.map((state) => state.id)).toContain('order-1');
    expect(states.find((state) => state.id === 'order-1')?.branch).not.toMatch(/^flow-states\//);

    const unknown = await crewline('checkpoint', 'flows', 'rerun', 'order-1', '--from', 'ship');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(
      /"ship" never completed in flow state "order-1" \(completed: receive, confirm\)/,
    );
    const missing = await crewline('checkpoint', 'flows', 'rerun', 'order-1');
    expect(missing.stderr).toMatch(/--from <method>/);
    expect(calls).toEqual([`${kind}:confirm`]);
  });

  it('info shows a flow checkpoint: completed methods and state, no false placeholders', async () => {
    const result = await crewline('info');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`flow OrderFlow-${kind}`);
    expect(result.stdout).toContain('Completed methods: receive, confirm');
    expect(result.stdout).toContain('items = 2');
    expect(result.stdout).not.toContain('placeholders without a value');
  });
});

describe('flows with a @persist flow kicked off in another flow', () => {
  it('lists its state: its saves are on the parent run’s branch, not flow-states/', async () => {
    const project = await temporaryDirectory();
    const location = join(project.path, 'states');
    @persist({ location })
    class InnerFlow extends Flow<{ steps: number }> {
      initialState = { steps: 0 };
      @start() first() {
        this.state.steps += 1;
        return 'first';
      }
    }
    class ParentFlow extends Flow<{ note: string }> {
      initialState = { note: '' };
      @start() async delegate() {
        await new InnerFlow().kickoff({ inputs: { id: 'nested-state' } });
        return 'delegated';
      }
    }
    try {
      await new ParentFlow({ bus: new EventBus(), checkpoint: { location, onEvents: ['*'] } }).kickoff();
      // What Flow.listStates and kickoff({ inputs: { id } }) find.
      expect((await InnerFlow.listStates({ location })).map((state) => state.id)).toEqual(['nested-state']);
      const { code, stdout } = await runCommand(['checkpoint', 'flows', location], { cwd: project.path });
      expect(code).toBe(0);
      expect(stdout).toMatch(
        /1 flow state in .*\n\nSTATE ID +FLOW +LAST METHOD[^\n]*\nnested-state +InnerFlow +first /,
      );
      // The parent, checkpointed without @persist, is still left out, with its hint.
      expect(stdout).toContain('1 run of a flow checkpointed without @persist is not listed');
      const json = await runCommand(['checkpoint', 'flows', location, '--json'], { cwd: project.path });
      expect(JSON.parse(json.stdout).states.map((state: { id: string }) => state.id)).toEqual([
        'nested-state',
      ]);
    } finally {
      await project.remove();
    }
  });

  it('leaves out a plain flow kicked off inside a @persist flow: its saves are on flow-states/, but kicked off by its id it would start over', async () => {
    const project = await temporaryDirectory();
    const location = join(project.path, 'states');
    class PlainInner extends Flow<{ steps: number }> {
      initialState = { steps: 0 };
      @start() first() {
        this.state.steps += 1;
        return 'first';
      }
    }
    @persist({ location })
    class PersistedParent extends Flow<{ note: string }> {
      initialState = { note: '' };
      @start() async delegate() {
        await new PlainInner().kickoff({ inputs: { id: 'plain-inner' } });
        return 'delegated';
      }
    }
    try {
      await new PersistedParent({ bus: new EventBus() }).kickoff({ inputs: { id: 'parent-state' } });
      const json = await runCommand(['checkpoint', 'flows', location, '--json'], { cwd: project.path });
      expect(json.code).toBe(0);
      expect(
        JSON.parse(json.stdout).states.map(
          (state: { flowName: string; id: string }) => `${state.flowName}:${state.id}`,
        ),
      ).toEqual(['PersistedParent:parent-state']);
    } finally {
      await project.remove();
    }
  });
});
