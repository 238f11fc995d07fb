// Spare temp files (spare-files.ts) do not outlive their process: a graceful end removes them (the
// runtime's signal path, process.exit), and a later process removes those of a writer that was
// killed — never those of a writer that is still running.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite, createTestRun } from '@crewline/provider-testkit/fixtures';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonProvider } from '../json-provider.js';
import { spawnScript } from '../test-support/spawn.js';
import { resetTempFileSweeps } from './temp-sweep.js';

let location: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  location = mkdtempSync(join(tmpdir(), 'crewline-json-spare-end-'));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(location, { recursive: true, force: true });
});

const sparesOf = (pid: number | undefined) =>
  readdirSync(join(location, 'main')).filter((name) => name.startsWith(`.spare.${pid}.`));

/** Starts a spare keeper (test-support/spare-keeper.ts) and resolves once its spares exist. */
function startKeeper(ending: 'signal' | 'exit' | 'kill'): Promise<ChildProcess> {
  const child = spawnScript('./spare-keeper.ts', [location, ending]);
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').startsWith('ready')) resolve(child);
    });
    child.on('exit', (code, signal) => {
      if (ending !== 'exit') reject(new Error(`spare keeper ended early (${signal ?? code}): ${stderr}`));
      else resolve(child);
    });
  });
}

function ended(child: ChildProcess): Promise<string> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve(String(child.signalCode ?? child.exitCode));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(String(signal ?? code))));
}

describe('spare temp files at the end of their process', () => {
  it('a process that ends right after close() (the runtime on SIGINT) leaves none', async () => {
    const child = await startKeeper('signal');
    expect(sparesOf(child.pid)).toHaveLength(8);
    child.kill('SIGINT');
    expect(await ended(child)).toBe('SIGINT');
    expect(sparesOf(child.pid)).toEqual([]);
  }, 30_000);

  it('process.exit() leaves none', async () => {
    const child = await startKeeper('exit');
    expect(await ended(child)).toBe('0');
    expect(sparesOf(child.pid)).toEqual([]);
  }, 30_000);

  it("a later process writing there removes a killed writer's spares, never a running one's", async () => {
    const killed = await startKeeper('kill');
    const running = await startKeeper('kill');
    killed.kill('SIGKILL');
    await ended(killed);
    expect(sparesOf(killed.pid)).toHaveLength(8);

    resetTempFileSweeps(); // this process is "a later process": it has not used the location yet
    const provider = new JsonProvider();
    await provider.writeBatch(location, [
      buildCheckpointWrite({ run: createTestRun({ provider, location }) }),
    ]);
    expect(sparesOf(killed.pid)).toEqual([]);
    expect(sparesOf(running.pid)).toHaveLength(8);
    // Never listed nor read as checkpoints.
    const listed = await provider.list(location);
    expect(listed.every((entry) => entry.reference.endsWith('.json'))).toBe(true);
    await provider.close();
  }, 30_000);
});
