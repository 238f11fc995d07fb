// The fuzz suite reduced to a few hundred cases, for `pnpm check`: every class of hostile
// checkpoint file and damaged database, with the same oracles as `bench:fuzz`. The seed is new on
// every run (more ground covered over time) and printed in the failure, with the replay command.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFuzzSuite } from '../fuzz-suite.js';
import { randomSeed } from '../random-source.js';
import { databaseDamages } from './database-damage.js';
import { jsonMutations } from './json-mutations.js';

/** Cases per class: 180 hostile checkpoint files and 70 damaged databases. */
const filesPerClass = 20;
const databasesPerClass = 10;

/** The report is written, as by the full command, then removed: the committed results stay the full run's. */
const reportPath = join(tmpdir(), `crewline-fuzz-reduced-${process.pid}.md`);
afterAll(() => rmSync(reportPath, { force: true }));

describe('fuzz suite, reduced', () => {
  it('hostile checkpoint files and damaged databases: typed errors only, no prototype change, no write outside, no write into a damaged database', async () => {
    const seed = randomSeed();
    const run = await runFuzzSuite({
      seed,
      cases: filesPerClass * jsonMutations.length,
      databaseCases: databasesPerClass * databaseDamages.length,
      print: false,
      reportPath,
    });
    const failing = [...run.json, ...run.database]
      .filter((result) => result.outcome === 'failed')
      .map(
        (result) =>
          `${result.suite}:${result.index} ${result.mutation} (${result.detail.slice(0, 200)}): ${result.failures.map((failure) => `${failure.kind} in ${failure.operation}: ${failure.message}`).join('; ')} — replay with bench:fuzz --seed ${seed} --case ${result.suite}:${result.index}`,
      );
    expect(failing).toEqual([]);
    expect(run.json).toHaveLength(filesPerClass * jsonMutations.length);
    expect(run.database).toHaveLength(databasesPerClass * databaseDamages.length);
  });
});
