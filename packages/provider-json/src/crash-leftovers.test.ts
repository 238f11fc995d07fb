// What runs killed with SIGKILL leave in a location, and what the next process to use it removes:
// the lock of the lineage a run held (.leases/<lineage>.lock) and the temp files of a group of
// writes it was in the middle of — at once when their process is provably gone, never while it
// may still run (a live process here, or a process of another pid space sharing the volume).
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { thisProcess } from '@crewline/runtime-state/internal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseTempFileName } from './file-names.js';
import { JsonProvider } from './json-provider.js';
import { spawnScript } from './test-support/spawn.js';
import { resetTempFileSweeps } from './write/temp-sweep.js';

let location: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  location = mkdtempSync(join(tmpdir(), 'crewline-json-crash-leftovers-'));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(location, { recursive: true, force: true });
});

/** Starts a run (test-support/killed-run.ts) and resolves once it holds its lock and left its temp files. */
function startRun(lineageId: string, mode?: 'lock-write'): Promise<ChildProcess> {
  const child = spawnScript('./killed-run.ts', [location, lineageId, ...(mode === undefined ? [] : [mode])]);
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').startsWith('ready')) resolve(child);
    });
    child.on('exit', (code, signal) => reject(new Error(`run ended early (${signal ?? code}): ${stderr}`)));
  });
}

function killed(child: ChildProcess): Promise<void> {
  child.kill('SIGKILL');
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.on('exit', () => resolve()));
}

const locks = () =>
  readdirSync(join(location, '.leases'))
    .filter((name) => name.endsWith('.lock'))
    .sort();
/** Temp files of lock writes (`<lineage>.lock.<pid>.<hex>.tmp`) of the process `pid`. */
const lockTempFilesOf = (pid: number | undefined) =>
  readdirSync(join(location, '.leases')).filter(
    (name) => name.includes(`.lock.${pid}.`) && name.endsWith('.tmp'),
  );
const tempFilesOf = (pid: number | undefined) =>
  readdirSync(join(location, 'main')).filter((name) => parseTempFileName(name)?.pid === pid);

/** A pid no process has: a child that ran and was reaped. */
function deadPid(): number {
  return Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString(),
  );
}

// Where the system tells the pid namespace and boot (Linux), a lock and a temp file say where their
// process ran; elsewhere nothing proves a process gone, and they are left to the older rules.
describe.skipIf(!existsSync('/proc/self/ns/pid') || !existsSync('/proc/sys/kernel/random/boot_id'))(
  'leftovers of runs killed with SIGKILL',
  () => {
    it("the next process to use the location removes a killed run's lock and temp files at once, never a running one's", async () => {
      const victim = await startRun('run-killed');
      const running = await startRun('run-running');
      expect(locks()).toEqual(['run-killed.lock', 'run-running.lock']);
      expect(tempFilesOf(victim.pid)).toHaveLength(6);
      await killed(victim);
      // A lock of a dead pid recorded in another pid namespace (a container sharing the host name and
      // the volume): its process may be running there.
      writeFileSync(
        join(location, '.leases', 'run-elsewhere.lock'),
        JSON.stringify({
          owner: 'elsewhere',
          holder: 'a run in another container',
          ...thisProcess(),
          pidNamespace: 'pid:[1]',
          pid: deadPid(),
          expiresAt: Date.now() + 60_000,
        }),
      );

      resetTempFileSweeps(); // this process is "the next process": it has not used the location yet
      const provider = new JsonProvider();
      await provider.write(location, buildCheckpointWrite());
      expect(locks()).toEqual(['run-elsewhere.lock', 'run-running.lock']);
      expect(tempFilesOf(victim.pid)).toEqual([]);
      expect(tempFilesOf(running.pid)).toHaveLength(6);
      await provider.close();
    }, 60_000);

    it("removes the temp file of a lock write a killed run was in the middle of, never a running run's", async () => {
      const victim = await startRun('run-killed', 'lock-write');
      const running = await startRun('run-running', 'lock-write');
      expect(lockTempFilesOf(victim.pid)).toHaveLength(1);
      expect(lockTempFilesOf(running.pid)).toHaveLength(1);
      await killed(victim);

      resetTempFileSweeps();
      const provider = new JsonProvider();
      await provider.list(location);
      expect(lockTempFilesOf(victim.pid)).toEqual([]);
      expect(locks()).toEqual(['run-running.lock']);
      expect(lockTempFilesOf(running.pid)).toHaveLength(1);
      await provider.close();
    }, 60_000);

    it('killed runs leave no lock behind once the location is used again', async () => {
      const runs = await Promise.all(Array.from({ length: 4 }, (_, index) => startRun(`run-${index}`)));
      for (const run of runs) await killed(run);
      expect(locks()).toHaveLength(4);
      resetTempFileSweeps();
      const provider = new JsonProvider();
      await provider.list(location);
      expect(locks()).toEqual([]);
      await provider.close();
    }, 60_000);
  },
);
