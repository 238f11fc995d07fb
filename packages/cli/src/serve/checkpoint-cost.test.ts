import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import {
  type RegisteredModelRun,
  registeredModelId,
  writeRegisteredModelRun,
} from '../test-support/registered-model-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import type { CheckpointDetail } from './checkpoint-detail.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

describe("the explorer's checkpoint detail: what the model calls cost", () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let run: RegisteredModelRun;
  const registry = cliProviderRegistry();
  const explorers: RunningExplorer[] = [];

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-serve-cost-');
    run = await writeRegisteredModelRun(project.path);
  });
  afterAll(async () => {
    for (const explorer of explorers) await explorer.close();
    await registry.close();
    await project?.remove();
  });

  async function detailOf(
    modelPrices?: Record<string, { inputPerMillion: number; outputPerMillion: number }>,
  ) {
    const explorer = await startExplorer({
      opened: await openLocation(run.location, project.path, registry),
      providers: registry,
      cwd: project.path,
      ...(modelPrices ? { modelPrices } : {}),
    });
    explorers.push(explorer);
    const response = await fetch(
      `http://127.0.0.1:${explorer.port}/api/checkpoints/${run.checkpoints.at(-1)!.id}`,
      {
        headers: { 'x-crewline-token': explorer.token },
      },
    );
    expect(response.status).toBe(200);
    return (await response.json()) as CheckpointDetail;
  }

  it('prices each model with the modelPrices it was started with, the offline one at $0', async () => {
    const { cost } = await detailOf({ [registeredModelId]: { inputPerMillion: 3, outputPerMillion: 15 } });
    const house = cost.models.find((model) => model.model === registeredModelId)!;
    expect(house).toMatchObject({ status: 'priced', calls: 1 });
    expect(house.usd).toBeCloseTo((house.tokens.input * 3 + house.tokens.output * 15) / 1_000_000, 12);
    expect(cost.models.find((model) => model.model === 'offline:helper')).toMatchObject({
      status: 'offline',
      usd: 0,
    });
    expect(cost.status).toBe('priced');
    expect(cost.usd).toBe(house.usd);
    expect(cost.note).toMatch(/^\$0\.\d+$/);
    expect(cost.modelLines).toEqual([
      expect.stringMatching(/^acme:house-model: 1 call, [\d,]+ in, [\d,]+ out: \$0\.\d+$/),
      expect.stringMatching(/^offline:helper: 1 call, .*: \$0 \(offline model\)$/),
    ]);
  });

  it('says unknown and names the model with its tokens when no price is given: no number', async () => {
    const { cost } = await detailOf();
    expect(cost).toMatchObject({ status: 'unknown', usd: null, unpriced: [registeredModelId] });
    expect(cost.note).toMatch(/^unknown: no price for acme:house-model, [\d,]+ tokens; add their prices/);
    expect(cost.note).not.toContain('$');
  });
});
