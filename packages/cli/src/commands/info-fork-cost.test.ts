import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import type { CheckpointDetail } from '../serve/checkpoint-detail.js';
import { type RunningExplorer, startExplorer } from '../serve/explorer-server.js';
import {
  type RegisteredModelRun,
  registeredModelId,
  writePriceConfig,
  writeRegisteredModelRun,
} from '../test-support/registered-model-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

interface CostJson {
  status: string;
  models: { model: string; calls: number }[];
}

const price = { inputPerMillion: 2.5, outputPerMillion: 10 };

describe('checkpoint info and the explorer of a fork: its own model calls apart from the inherited ones', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let run: RegisteredModelRun;
  let forkId: string;
  const registry = cliProviderRegistry();
  let explorer: RunningExplorer | undefined;

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-info-fork-cost-');
    // Research on the priced house model, then the write on the offline model: a fork of the
    // checkpoint after the research runs only the write, and inherits the research call.
    run = await writeRegisteredModelRun(project.path);
    await writePriceConfig(project.path, price);
    const fork = await runCommand(['checkpoint', 'fork', run.checkpoints[0]!.id, '--branch', 'what-if'], {
      cwd: project.path,
    });
    expect(fork.stderr).toBe('');
    expect(fork.code).toBe(0);
    const listed = await runCommand(['checkpoint', 'list', '--json'], { cwd: project.path });
    const checkpoints = JSON.parse(listed.stdout) as { checkpoints: { id: string; branch: string }[] };
    forkId = checkpoints.checkpoints.find((checkpoint) => checkpoint.branch === 'what-if')!.id;
  });
  afterAll(async () => {
    await explorer?.close();
    await registry.close();
    await project?.remove();
  });

  it('info --json: cost is the fork own calls, inheritedCost the research call of the run it came from', async () => {
    const { code, stdout } = await runCommand(['checkpoint', 'info', forkId, '--json'], {
      cwd: project.path,
    });
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { cost: CostJson; inheritedCost: CostJson | null };
    expect(report.cost.status).toBe('offline');
    expect(report.cost.models).toEqual([expect.objectContaining({ model: 'offline:helper', calls: 1 })]);
    expect(report.inheritedCost?.status).toBe('priced');
    expect(report.inheritedCost?.models).toEqual([
      expect.objectContaining({ model: registeredModelId, calls: 1 }),
    ]);
  });

  it('info: the Cost line is this branch own, the inherited calls on a line of their own', async () => {
    const { stdout } = await runCommand(['checkpoint', 'info', forkId], { cwd: project.path });
    expect(stdout).toContain('  Cost:      $0 (offline model)\n             offline:helper: 1 call, ');
    expect(stdout).toMatch(
      /\n {2}Inherited: \$0\.\d+: the calls of the checkpoint this branch was forked from \(\S+\), not counted above\n {13}acme:house-model: 1 call, /,
    );
    expect(stdout.match(/acme:house-model: 1 call/g)).toHaveLength(1);
  });

  it('info of a checkpoint that is not a fork has no inherited calls', async () => {
    const { stdout } = await runCommand(['checkpoint', 'info', run.checkpoints.at(-1)!.id, '--json'], {
      cwd: project.path,
    });
    expect((JSON.parse(stdout) as { inheritedCost: unknown }).inheritedCost).toBeNull();
  });

  it('the explorer detail: cost is the fork own, cost.inherited the parent run calls', async () => {
    explorer = await startExplorer({
      opened: await openLocation(run.location, project.path, registry),
      providers: registry,
      cwd: project.path,
      modelPrices: { [registeredModelId]: price },
    });
    const response = await fetch(`http://127.0.0.1:${explorer.port}/api/checkpoints/${forkId}`, {
      headers: { 'x-crewline-token': explorer.token },
    });
    expect(response.status).toBe(200);
    const { cost } = (await response.json()) as CheckpointDetail;
    expect(cost.note).toBe('$0 (offline model)');
    expect(cost.modelLines).toEqual([expect.stringMatching(/^offline:helper: 1 call, /)]);
    expect(cost.inherited?.modelLines).toEqual([expect.stringMatching(/^acme:house-model: 1 call, /)]);
    expect(cost.inherited?.note).toMatch(/^\$0\.\d+$/);
  });
});
