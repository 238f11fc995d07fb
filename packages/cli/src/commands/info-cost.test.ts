import { readDocument, runCost } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import {
  type RegisteredModelRun,
  registeredModelId,
  writePriceConfig,
  writeRegisteredModelRun,
} from '../test-support/registered-model-crew.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

interface InfoCost {
  status: string;
  usd: number | null;
  models: { model: string; status: string; usd: number | null; tokens: { input: number; output: number } }[];
}

describe('crewline checkpoint info: the cost of the model calls', () => {
  let priced: Awaited<ReturnType<typeof temporaryDirectory>>;
  let unpriced: Awaited<ReturnType<typeof temporaryDirectory>>;
  let run: RegisteredModelRun;

  beforeAll(async () => {
    priced = await temporaryDirectory('crewline-info-cost-');
    unpriced = await temporaryDirectory('crewline-info-cost-');
    run = await writeRegisteredModelRun(priced.path);
    await writePriceConfig(priced.path, { inputPerMillion: 2.5, outputPerMillion: 10 });
  });
  afterAll(async () => {
    await priced?.remove();
    await unpriced?.remove();
  });

  it('prices the tokens with the modelPrices of crewline.config, per model, the offline model at $0', async () => {
    const { code, stdout, stderr } = await runCommand(['checkpoint', 'info', '--json'], { cwd: priced.path });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const cost = (JSON.parse(stdout) as { cost: InfoCost }).cost;
    expect(cost.status).toBe('priced');
    const house = cost.models.find((model) => model.model === registeredModelId)!;
    expect(house.status).toBe('priced');
    expect(house.tokens.input).toBeGreaterThan(0);
    expect(house.usd).toBeCloseTo((house.tokens.input * 2.5 + house.tokens.output * 10) / 1_000_000, 12);
    expect(cost.models.find((model) => model.model === 'offline:helper')).toMatchObject({
      status: 'offline',
      usd: 0,
    });
    expect(cost.usd).toBe(house.usd);
    // The same numbers as the one function every reader uses.
    const provider = await providerOf('json');
    const last = run.checkpoints.at(-1)!;
    const document = await readDocument(provider, provider.resolveLocation(run.location), last.id);
    expect(
      runCost(document.events, { [registeredModelId]: { inputPerMillion: 2.5, outputPerMillion: 10 } }),
    ).toEqual(cost);

    const text = await runCommand(['checkpoint', 'info'], { cwd: priced.path });
    expect(text.stdout).toMatch(/\n {2}Cost: {6}\$0\.\d+\n/);
    expect(text.stdout).toContain(`             ${registeredModelId}: 1 call, `);
    expect(text.stdout).toContain('             offline:helper: 1 call, ');
  });

  it('says unknown, with the tokens, where the project gives no price', async () => {
    const { code, stdout } = await runCommand(['checkpoint', 'info', '--location', run.location], {
      cwd: unpriced.path,
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /Cost: {6}unknown: no price for acme:house-model, [\d,]+ tokens; add their prices to modelPrices in crewline\.config\.ts\n/,
    );
    expect(stdout).not.toMatch(/Cost: +\$/);
  });
});
