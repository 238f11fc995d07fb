// The first-use sweep removes lineage lock files (.leases/<lineage>.lock) only when their process is
// provably gone, the rule a takeover uses (see lineage-lock.ts), and under the mutex a takeover uses.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { thisProcess } from '@crewline/runtime-state/internal';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';
import { writerNameDigits } from '../write/temp-writer.js';
import { removeLocksOfGoneProcesses } from './lineage-lock.js';
import { mutexWaitMs } from './lock-mutex.js';

/** Runs once, just before the next takeover mutex is created (a process descheduled right there). */
let beforeMutexCreated: (() => void) | undefined;

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const linkSync: typeof actual.linkSync = (...parameters: Parameters<typeof actual.linkSync>) => {
    if (beforeMutexCreated !== undefined && String(parameters[1]).endsWith('.takeover')) {
      const hook = beforeMutexCreated;
      beforeMutexCreated = undefined;
      hook();
    }
    return actual.linkSync(...parameters);
  };
  return { ...actual, linkSync };
});

let root: string;
let leases: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'crewline-json-lock-sweep-'));
  leases = join(root, '.leases');
  mkdirSync(leases);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A pid no process has: a child that ran and was reaped. */
function deadPid(): number {
  return Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString(),
  );
}

/** Five hex digits other than `digits`' first five: the tag of another pid space. */
function otherTag(digits: string): string {
  return ((Number.parseInt(digits.slice(0, 5), 16) + 1) % 0x100000).toString(16).padStart(5, '0');
}

function plantLock(lineageId: string, identity: object, expiresInMs = 60_000): string {
  const path = join(leases, `${lineageId}.lock`);
  writeFileSync(
    path,
    JSON.stringify({ owner: lineageId, holder: lineageId, ...identity, expiresAt: Date.now() + expiresInMs }),
  );
  return path;
}

describe.skipIf(!existsSync('/proc/self/ns/pid') || !existsSync('/proc/sys/kernel/random/boot_id'))(
  'removing the lineage locks of gone processes',
  () => {
    it('removes a lock whose process is provably gone, and keeps every lock whose process may run', () => {
      const gone = plantLock('gone', { ...thisProcess(), pid: deadPid() });
      const alive = plantLock('alive', { ...thisProcess(), pid: process.ppid });
      const own = plantLock('own', thisProcess());
      // Run out long ago, but recorded in another pid namespace: its process may still be running there.
      const elsewhere = plantLock(
        'elsewhere',
        { ...thisProcess(), pidNamespace: 'pid:[1]', pid: deadPid() },
        -60_000,
      );
      const anotherBoot = plantLock('boot', { ...thisProcess(), bootId: 'another-boot', pid: deadPid() });
      const older = plantLock('older', { host: thisProcess().host, pid: deadPid() });
      const damaged = join(leases, 'damaged.lock');
      writeFileSync(damaged, '{"owner"');
      const longAgo = new Date(Date.now() - 60 * 60 * 1000);
      utimesSync(damaged, longAgo, longAgo);

      expect(removeLocksOfGoneProcesses(root).locks).toBe(1);
      expect(existsSync(gone)).toBe(false);
      for (const kept of [alive, own, elsewhere, anotherBoot, older, damaged])
        expect(existsSync(kept)).toBe(true);
    });

    it("clears a gone process's abandoned mutex with its lock, and waits for no live process's mutex", () => {
      const lock = plantLock('abandoned', { ...thisProcess(), pid: deadPid() });
      writeFileSync(`${lock}.takeover`, JSON.stringify({ ...thisProcess(), pid: deadPid() }));
      // A live process (this test's parent) is changing these locks right now: their next holder, say.
      const busy = ['busy-1', 'busy-2', 'busy-3'].map((lineageId) => {
        const path = plantLock(lineageId, { ...thisProcess(), pid: deadPid() });
        writeFileSync(`${path}.takeover`, JSON.stringify({ ...thisProcess(), pid: process.ppid }));
        return path;
      });

      const startedAt = Date.now();
      expect(removeLocksOfGoneProcesses(root).locks).toBe(1);
      // Waiting as a takeover does would have taken mutexWaitMs for each of them.
      expect(Date.now() - startedAt).toBeLessThan(mutexWaitMs);
      expect(readdirSync(leases).sort()).toEqual(
        busy
          .flatMap((path) => [path, `${path}.takeover`].map((file) => file.slice(leases.length + 1)))
          .sort(),
      );
    });

    it('removes a mutex left beside no lock by a process killed inside it, never a live one', () => {
      writeFileSync(
        join(leases, 'released.lock.takeover'),
        JSON.stringify({ ...thisProcess(), pid: deadPid() }),
      );
      writeFileSync(
        join(leases, 'releasing.lock.takeover'),
        JSON.stringify({ ...thisProcess(), pid: process.ppid }),
      );
      expect(removeLocksOfGoneProcesses(root).locks).toBe(0);
      expect(readdirSync(leases)).toEqual(['releasing.lock.takeover']);
    });

    it('a lock taken over between its first look and its mutex is kept', () => {
      const lock = plantLock('taken', { ...thisProcess(), pid: deadPid() });
      // Another process takes the dead holder's lock over (a resume) just before the sweep enters the mutex.
      beforeMutexCreated = () => plantLock('taken', { ...thisProcess(), pid: process.ppid });
      expect(removeLocksOfGoneProcesses(root).locks).toBe(0);
      expect(beforeMutexCreated).toBeUndefined();
      expect(existsSync(lock)).toBe(true);
    });

    it("removes the temp files of lock and mutex writes whose writer is provably gone, never a running writer's", () => {
      // Named as a lock write names them (whole-file.ts): `<lock or mutex>.<pid>.<8 hex>.tmp`, the hex
      // digits starting with the tag of this pid space.
      const tempOf = (target: string, pid: number, digits = writerNameDigits()) =>
        join(leases, `${target}.${pid}.${digits}.tmp`);
      const gone = [tempOf('gone.lock', deadPid()), tempOf('gone.lock.takeover', deadPid())];
      const kept = [
        tempOf('alive.lock', process.ppid),
        // This process's own, written since it started (a write in flight).
        tempOf('own.lock', process.pid),
        // A dead pid here, named in another pid space (its tag differs): it may be running there.
        tempOf('elsewhere.lock', deadPid(), `${otherTag(writerNameDigits())}000`),
        // Random digits (an older version): nothing proves its writer gone.
        join(leases, `older.lock.${deadPid()}.8f3a2b1c9d0e4.tmp`),
        // Not a lock's: nothing this sweep knows.
        tempOf('notes.txt', deadPid()),
      ];
      for (const path of [...gone, ...kept]) writeFileSync(path, '{"owner"');
      expect(removeLocksOfGoneProcesses(root)).toEqual({ locks: 0, tempFiles: 2 });
      for (const path of gone) expect(existsSync(path)).toBe(false);
      for (const path of kept) expect(existsSync(path)).toBe(true);
    });

    it('a lock write takes the next temp name when a killed predecessor with this pid left one', async () => {
      // A container restarting its program gives it the same pid: the counted name can be taken.
      const digits = writerNameDigits();
      const next = `${digits.slice(0, 5)}${((Number.parseInt(digits.slice(5), 16) + 1) % 0x1000).toString(16).padStart(3, '0')}`;
      const left = join(leases, `taken.lock.${process.pid}.${next}.tmp`);
      writeFileSync(left, '{"owner"');
      const provider = new JsonProvider({ fsync: false });
      await provider.claimLease(root, {
        lineageId: 'taken',
        owner: 'restarted',
        checkpointId: null,
        holder: 'a restarted run',
        ttlMs: 60_000,
      });
      expect(readdirSync(leases).sort()).toEqual(['taken.lock', basename(left)]);
    });

    it('a location without locks has nothing to sweep', () => {
      rmSync(leases, { recursive: true });
      expect(removeLocksOfGoneProcesses(root).locks).toBe(0);
      expect(removeLocksOfGoneProcesses(join(root, 'missing')).locks).toBe(0);
    });
  },
);
