import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { Flow, listen, persist, start } from '@crewline/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import type { CheckpointComparison } from './checkpoint-comparison.js';
import type { CheckpointDetail } from './checkpoint-detail.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';
import type { LineageGraph } from './lineage-graph.js';

describe('crewline checkpoint serve over a flow', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let explorer: RunningExplorer;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-serve-flow-');
    const location = join(project.path, '.checkpoints');
    const provider = await providerOf('json');
    @persist({ location, provider })
    class PackingFlow extends Flow<{ items: number; plan: { steps: string[] }; note?: string }> {
      static flowName = 'PackingFlow-explorer';
      initialState = { items: 0, plan: { steps: ['count'] } };

      @start() count() {
        this.state.items += 2;
        return this.state.items;
      }

      @listen('count') confirm(items: number) {
        this.state.plan.steps.push('confirm');
        this.state.note = `confirmed ${items}`;
        return this.state.note;
      }
    }
    await new PackingFlow({ bus: new EventBus() }).kickoff({ inputs: { id: 'packing-1' } });
    explorer = await startExplorer({
      opened: await openLocation(location, project.path, registry),
      providers: registry,
      cwd: project.path,
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await registry.close();
    await project?.remove();
  });

  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`http://127.0.0.1:${explorer.port}${path}`, {
      headers: { 'x-crewline-token': explorer.token },
    });
    expect(response.status, path).toBe(200);
    return (await response.json()) as T;
  };

  it('shows the flow state of a checkpoint and compares two states path by path', async () => {
    const graph = await get<LineageGraph>('/api/graph');
    const group = graph.groups.find((entry) => entry.kind === 'flow')!;
    const ids = group.lanes[0]!.nodes.flatMap((node) => node.ids);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    const last = await get<CheckpointDetail>(`/api/checkpoints/${ids.at(-1)}`);
    const flow = last.entities.find((entity) => entity.kind === 'flow')!;
    expect(flow.state).toMatchObject({
      items: 2,
      note: 'confirmed 2',
      plan: { steps: ['count', 'confirm'] },
    });
    expect(flow.completedMethods).toEqual(['count', 'confirm']);
    const diff = await get<CheckpointComparison>(`/api/diff?a=${ids[0]}&b=${ids.at(-1)}`);
    expect(diff.state).toEqual(
      expect.arrayContaining([
        { path: 'plan.steps[1]', change: 'added', to: 'confirm' },
        { path: 'note', change: 'added', to: 'confirmed 2' },
      ]),
    );
  });
});
