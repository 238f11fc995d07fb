#!/usr/bin/env node
// The `crewline` binary. Runs the built CLI (dist/bin.js). In a source checkout without a build it
// runs the TypeScript sources instead, in a child node with tsx and the `@crewline/source` export
// condition (workspace packages then resolve to their src/ too), so `crewline` works right after
// `pnpm install`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = new URL('../dist/bin.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const source = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
  const result = spawnSync(
    process.execPath,
    [
      '--conditions=@crewline/source',
      '--import',
      import.meta.resolve('tsx'),
      source,
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit' },
  );
  if (result.error) {
    process.stderr.write(`crewline: could not start from source: ${result.error.message}\n`);
    process.exitCode = 70;
  } else {
    process.exitCode = result.status ?? (result.signal === 'SIGINT' ? 130 : 1);
  }
}
