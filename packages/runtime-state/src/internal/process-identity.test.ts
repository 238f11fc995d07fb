import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { processIsGone, processRunsHere, thisProcess } from './process-identity.js';

/** The pid of a process that has exited (and was reaped) by the time this returns. */
function deadPid(): number {
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(gone.stdout.toString());
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('processIsGone', () => {
  it('is true for a pid of this host, namespace and boot that no process has', () => {
    expect(processIsGone({ ...thisProcess(), pid: deadPid() })).toBe(true);
  });

  it('is false for this process and for a live one, which run here', async () => {
    expect(processIsGone(thisProcess())).toBe(false);
    expect(processRunsHere(thisProcess())).toBe(true);
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    try {
      expect(processIsGone({ ...thisProcess(), pid: child.pid! })).toBe(false);
      expect(processRunsHere({ ...thisProcess(), pid: child.pid! })).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it.each([
    ['another host', { host: 'another-host' }],
    ['another pid namespace', { pidNamespace: 'pid:[1]' }],
    ['another boot', { bootId: 'another-boot' }],
    ['a pid that is no process (0: the process group)', { pid: 0 }],
  ])('is false for a dead pid recorded on %s: nothing proves that holder gone', (_, elsewhere) => {
    const dead = { ...thisProcess(), pid: deadPid() };
    expect(processIsGone({ ...dead, ...elsewhere })).toBe(false);
    // Nor that it runs: this process's pid there is another process.
    expect(processRunsHere({ ...thisProcess(), ...elsewhere })).toBe(false);
  });

  it('is false for a record without namespace and boot (an older record, or a system without /proc)', () => {
    const here = thisProcess();
    expect(processIsGone({ host: here.host, pid: deadPid() })).toBe(false);
  });

  it('is true for a killed child its parent has not reaped yet (a zombie), on a system that tells it', async () => {
    // A shell that starts a sleeping child and then sleeps itself, never waiting for it.
    const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const pid = await new Promise<number>((resolve) =>
        parent.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
      );
      process.kill(pid, 'SIGKILL');
      const zombie = () => {
        try {
          return readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
        } catch {
          return false;
        }
      };
      for (let waited = 0; !zombie() && waited < 5000; waited += 20) await sleep(20);
      if (!zombie()) return; // No /proc here: nothing tells a zombie apart.
      expect(processIsGone({ ...thisProcess(), pid })).toBe(true);
      expect(processRunsHere({ ...thisProcess(), pid })).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it.each([
    ['EACCES', 'SELinux or AppArmor refusing the probe of a live, differently confined process'],
    ['EPERM', 'a live process of another user'],
  ])('is false when the probe is refused with %s (%s): only ESRCH proves a pid unused', (code) => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    const kill = process.kill.bind(process);
    vi.spyOn(process, 'kill').mockImplementation((pid, signal) => {
      if (pid === child.pid && signal === 0)
        throw Object.assign(new Error(`kill ${code}`), { code, errno: -13, syscall: 'kill' });
      return kill(pid, signal);
    });
    try {
      expect(processIsGone({ ...thisProcess(), pid: child.pid! })).toBe(false);
      expect(processRunsHere({ ...thisProcess(), pid: child.pid! })).toBe(true);
    } finally {
      vi.restoreAllMocks();
      child.kill('SIGKILL');
    }
  });
});
