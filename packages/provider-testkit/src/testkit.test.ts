import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mutants } from './test-support/mutant-providers.js';

interface JsonReport {
  testResults: { assertionResults: { ancestorTitles: string[]; title: string; status: string }[] }[];
}

describe('the conformance suite can fail', () => {
  it('every mutant provider (one defect each) fails at least one test', () => {
    const packageDirectory = fileURLToPath(new URL('..', import.meta.url));
    const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
    const output = mkdtempSync(join(tmpdir(), 'crewline-testkit-mutants-'));
    try {
      const reportFile = join(output, 'report.json');
      const run = spawnSync(
        process.execPath,
        [
          vitest,
          'run',
          '--config',
          'src/test-support/vitest.mutants.config.ts',
          '--reporter=json',
          `--outputFile=${reportFile}`,
        ],
        { cwd: packageDirectory, encoding: 'utf8', timeout: 120_000, env: { ...process.env, CI: 'true' } },
      );
      const report = JSON.parse(readFileSync(reportFile, 'utf8')) as JsonReport;
      const results = report.testResults.flatMap((file) => file.assertionResults);
      expect(results.length, run.stderr).toBeGreaterThan(Object.keys(mutants).length * 30);
      for (const name of Object.keys(mutants)) {
        const own = results.filter((result) => result.ancestorTitles[0]?.startsWith(`mutant: ${name} `));
        expect(own.length, name).toBeGreaterThan(30);
        const failed = own.filter((result) => result.status === 'failed').map((result) => result.title);
        expect(failed.length, `no test caught the mutant "${name}"`).toBeGreaterThan(0);
      }
    } finally {
      rmSync(output, { recursive: true, force: true });
    }
  }, 120_000);
});
