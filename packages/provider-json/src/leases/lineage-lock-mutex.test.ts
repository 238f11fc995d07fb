import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LeaseRequest } from '@crewline/runtime-state';
import { thisProcess } from '@crewline/runtime-state/internal';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assertHoldsLineageLock,
  claimLineageLock,
  releaseLineageLock,
  renewLineageLock,
} from './lineage-lock.js';

/** Runs once, just before the next rename onto or removal of a lock file (a process descheduled there). */
let beforeLockChange: ((lockPath: string) => void) | undefined;

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const hooked =
    <Parameters extends unknown[], Result>(operation: (...parameters: Parameters) => Result) =>
    (...parameters: Parameters): Result => {
      const target = String(parameters.at(-1));
      if (beforeLockChange !== undefined && target.endsWith('.lock')) {
        const hook = beforeLockChange;
        beforeLockChange = undefined;
        hook(target);
      }
      return operation(...parameters);
    };
  const mkdirSync: typeof actual.mkdirSync = (...parameters: Parameters<typeof actual.mkdirSync>) => {
    if (beforeReaperCreated !== undefined && String(parameters[0]).endsWith('.reaper')) {
      const hook = beforeReaperCreated;
      beforeReaperCreated = undefined;
      hook();
    }
    return actual.mkdirSync(...parameters);
  };
  return {
    ...actual,
    mkdirSync,
    renameSync: hooked(actual.renameSync),
    unlinkSync: hooked(actual.unlinkSync),
  };
});

/** Runs once, just before the next creation of a reaper directory (a process descheduled there). */
let beforeReaperCreated: (() => void) | undefined;

let root: string;
const P = '20260101T000000000-00000001';
const request = (owner: string): LeaseRequest => ({
  lineageId: 'run-1',
  owner,
  checkpointId: P,
  holder: owner,
  ttlMs: 60_000,
});
const claim = (owner: string) => claimLineageLock(root, request(owner), async () => P);
const holds = (owner: string) => {
  try {
    assertHoldsLineageLock(root, { lineageId: 'run-1', owner });
    return true;
  } catch {
    return false;
  }
};

/** The lock runs out while its holder is descheduled, and process B takes it over (or tries to). */
function expireAndLetBClaim(lockPath: string, outcome: { granted?: boolean }): void {
  writeFileSync(
    lockPath,
    JSON.stringify({ owner: 'A', holder: 'A', host: 'elsewhere', pid: 1, expiresAt: Date.now() - 1 }),
  );
  // Synchronous on purpose: the holder is stopped between its check and its rename or removal.
  outcome.granted = undefined;
  void claim('B').then(
    () => {
      outcome.granted = true;
    },
    () => {
      outcome.granted = false;
    },
  );
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'crewline-json-lock-mutex-'));
});
afterEach(() => {
  beforeLockChange = undefined;
  beforeReaperCreated = undefined;
  rmSync(root, { recursive: true, force: true });
});

describe('lineage lock changes under the mutex', () => {
  it('a renewal cannot overwrite a takeover that came between its check and its rename', async () => {
    await claim('A');
    const outcome: { granted?: boolean } = {};
    beforeLockChange = (lockPath) => expireAndLetBClaim(lockPath, outcome);
    renewLineageLock(root, { lineageId: 'run-1', owner: 'A' }, 60_000);
    await new Promise((resolve) => setImmediate(resolve));
    // Never two holders: B, if granted, still holds; else A's renewal went through.
    expect(outcome.granted === true ? holds('B') : holds('A')).toBe(true);
    expect(holds('A') && holds('B')).toBe(false);
    expect(outcome.granted).toBe(false);
  });

  it('a release cannot remove the lock of a process that took over between its check and its removal', async () => {
    await claim('A');
    const outcome: { granted?: boolean } = {};
    beforeLockChange = (lockPath) => expireAndLetBClaim(lockPath, outcome);
    releaseLineageLock(root, { lineageId: 'run-1', owner: 'A' });
    await new Promise((resolve) => setImmediate(resolve));
    if (outcome.granted === true) expect(holds('B')).toBe(true);
    expect(outcome.granted).toBe(false);
    expect(holds('A')).toBe(false);
  });

  /** A's lock, run out, with its takeover mutex left by a process that died while holding it. */
  async function expiredLockAndMutex(): Promise<string> {
    await claim('A');
    const lock = join(root, '.leases', 'run-1.lock');
    writeFileSync(
      lock,
      JSON.stringify({ owner: 'A', holder: 'A', host: 'elsewhere', pid: 1, expiresAt: Date.now() - 1 }),
    );
    const mutex = `${lock}.takeover`;
    mkdirSync(mutex);
    return mutex;
  }

  it('takes over a mutex abandoned long ago, not one in use', async () => {
    const mutex = await expiredLockAndMutex();
    await expect(claim('B')).rejects.toMatchObject({ code: 'conflict' });
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(mutex, longAgo, longAgo);
    await expect(claim('B')).resolves.toMatchObject({ owner: 'B' });
    expect(holds('B')).toBe(true);
  });

  it('takes over at once a fresh mutex whose process is gone (killed inside it), not one whose process runs', async () => {
    const mutex = await expiredLockAndMutex();
    // The mutex as this version makes it: a file naming its process.
    rmdirSync(mutex);
    const here = thisProcess();
    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    try {
      writeFileSync(mutex, JSON.stringify({ ...here, pid: live.pid }));
      await expect(claim('B')).rejects.toMatchObject({ code: 'conflict' });
      const dead = Number(
        spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString(),
      );
      writeFileSync(mutex, JSON.stringify({ ...here, pid: dead }));
      await expect(claim('B')).resolves.toMatchObject({ owner: 'B' });
      expect(holds('B')).toBe(true);
      expect(readdirSync(join(root, '.leases'))).toEqual(['run-1.lock']);
    } finally {
      live.kill('SIGKILL');
    }
  });

  it('an abandoned mutex is cleared by one process at a time: not while another one clears it', async () => {
    const mutex = await expiredLockAndMutex();
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(mutex, longAgo, longAgo);
    // Another process is clearing it right now.
    mkdirSync(`${mutex}.reaper`);
    await expect(claim('B')).rejects.toMatchObject({ code: 'conflict' });
    expect(holds('B')).toBe(false);
    // That process was killed while clearing it: its reaper directory is abandoned too.
    utimesSync(`${mutex}.reaper`, longAgo, longAgo);
    await expect(claim('B')).resolves.toMatchObject({ owner: 'B' });
    expect(readdirSync(join(root, '.leases'))).toEqual(['run-1.lock']);
  });

  it('does not clear a mutex another process cleared and entered again while it went for the reaper', async () => {
    const mutex = await expiredLockAndMutex();
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(mutex, longAgo, longAgo);
    // This process saw the mutex abandoned; before it took the reaper, another process cleared the
    // mutex and a third entered it anew (fresh, in use). Cleared again, both would be inside.
    beforeReaperCreated = () => {
      rmdirSync(mutex);
      mkdirSync(mutex);
    };
    await expect(claim('B')).rejects.toMatchObject({ code: 'conflict' });
    expect(beforeReaperCreated).toBeUndefined();
    expect(holds('B')).toBe(false);
    expect(existsSync(mutex)).toBe(true);
  });
});
