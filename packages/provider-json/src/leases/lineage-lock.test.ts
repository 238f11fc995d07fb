import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import type { LeaseRequest } from '@crewline/runtime-state';
import { thisProcess } from '@crewline/runtime-state/internal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonProvider } from '../json-provider.js';

describe('JsonProvider lineage locks (one machine)', () => {
  let sandbox: string;
  let location: string;
  const provider = new JsonProvider({ fsync: false });
  const request = (owner: string, checkpointId: string | null, ttlMs = 10_000): LeaseRequest => ({
    lineageId: 'run-1',
    owner,
    checkpointId,
    holder: `crew Research, ${owner}`,
    ttlMs,
  });
  const writeInRun = (parentId: string | null, lease?: { lineageId: string; owner: string }) =>
    provider.write(location, {
      ...buildCheckpointWrite({ metadata: { lineageId: 'run-1', parentId } }),
      ...(lease ? { lease } : {}),
    });

  beforeEach(() => {
    sandbox = mkdtempSync(join(tmpdir(), 'crewline-json-locks-'));
    location = join(sandbox, 'checkpoints');
  });
  afterEach(() => rmSync(sandbox, { recursive: true, force: true }));

  it('grants one continuation of a head; a second one is refused, naming the holder', async () => {
    const head = await writeInRun(null);
    await provider.claimLease(location, request('first', head.id));
    const refused = provider.claimLease(location, request('second', head.id));
    await expect(refused).rejects.toMatchObject({ code: 'conflict' });
    // In the words of every provider, with the details a command line names its own flag from.
    await expect(refused).rejects.toThrow(
      /^\[provider-json\] lineage "run-1" is being continued by crew Research, first, whose lease has (10\.0|9\.\d) s left; wait for it to end \(its process is running on this machine\), or fork instead \(onConflict: 'fork'\)$/,
    );
    await expect(refused).rejects.toMatchObject({
      details: { lineageId: 'run-1', holder: 'crew Research, first', atClaim: true, holderRunsHere: true },
    });
    // The same owner may claim again (a retried claim).
    await expect(provider.claimLease(location, request('first', head.id))).resolves.toMatchObject({
      owner: 'first',
    });
  });

  it('refuses to continue a checkpoint that is no longer the head of its run', async () => {
    const first = await writeInRun(null);
    const second = await writeInRun(first.id);
    await expect(provider.claimLease(location, request('late', first.id))).rejects.toMatchObject({
      code: 'conflict',
      details: { lineageId: 'run-1', headId: second.id },
    });
  });

  it('a live holder is reported before a moved head: a late continuer is refused, not sent to a branch', async () => {
    const first = await writeInRun(null);
    await provider.claimLease(location, request('holder', first.id));
    await writeInRun(first.id, { lineageId: 'run-1', owner: 'holder' });
    await expect(provider.claimLease(location, request('late', first.id))).rejects.toMatchObject({
      code: 'conflict',
      details: { lineageId: 'run-1', holder: 'crew Research, holder' },
    });
  });

  it('stores a write only under the held lock; a lost or foreign lock stores nothing', async () => {
    const head = await writeInRun(null);
    await provider.claimLease(location, request('holder', head.id));
    const next = await writeInRun(head.id, { lineageId: 'run-1', owner: 'holder' });
    await expect(writeInRun(next.id, { lineageId: 'run-1', owner: 'intruder' })).rejects.toMatchObject({
      code: 'conflict',
    });
    expect((await provider.list(location)).map((entry) => entry.id)).toEqual([head.id, next.id]);
    // A write that carries no lease (a run that does not fence) is not checked.
    await expect(writeInRun(next.id)).resolves.toBeDefined();
  });

  it('a released lock lets the next process continue at once; a release by another does nothing', async () => {
    const head = await writeInRun(null);
    await provider.claimLease(location, request('first', head.id));
    await provider.releaseLease(location, { lineageId: 'run-1', owner: 'someone-else' });
    await expect(provider.claimLease(location, request('second', head.id))).rejects.toMatchObject({
      code: 'conflict',
    });
    await provider.releaseLease(location, { lineageId: 'run-1', owner: 'first' });
    await expect(provider.claimLease(location, request('second', head.id))).resolves.toMatchObject({
      owner: 'second',
    });
  });

  it('takes over the lock of a process that is gone, and one whose time ran out', async () => {
    const head = await writeInRun(null);
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const deadPid = Number(gone.stdout.toString());
    mkdirSync(join(location, '.leases'), { recursive: true });
    writeFileSync(
      join(location, '.leases', 'run-1.lock'),
      JSON.stringify({
        owner: 'dead',
        holder: 'a killed run',
        ...thisProcess(),
        pid: deadPid,
        expiresAt: Date.now() + 60_000,
      }),
    );
    await expect(provider.claimLease(location, request('next', head.id))).resolves.toMatchObject({
      owner: 'next',
    });
    await expect(writeInRun(head.id, { lineageId: 'run-1', owner: 'dead' })).rejects.toMatchObject({
      code: 'conflict',
    });

    await provider.releaseLease(location, { lineageId: 'run-1', owner: 'next' });
    await provider.claimLease(location, request('short', (await provider.latest(location))!.id, 50));
    await new Promise((resolve) => setTimeout(resolve, 80));
    await expect(
      provider.renewLease(location, { lineageId: 'run-1', owner: 'short' }, 1000),
    ).rejects.toMatchObject({ code: 'conflict' });
    await expect(
      provider.claimLease(location, request('after', (await provider.latest(location))!.id)),
    ).resolves.toMatchObject({ owner: 'after' });
  });

  it.each([
    ['another pid namespace (a container sharing the host name and the volume)', { pidNamespace: 'pid:[1]' }],
    ['another boot of the machine', { bootId: 'another-boot' }],
    ['no namespace recorded (an older lock)', { pidNamespace: undefined, bootId: undefined }],
  ])('a lock naming a dead pid in %s is held until it runs out', async (_, elsewhere) => {
    const { pidNamespace, bootId } = thisProcess();
    const here = { pidNamespace, bootId };
    const recordedHere = here.pidNamespace !== undefined || here.bootId !== undefined;
    const head = await writeInRun(null);
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    mkdirSync(join(location, '.leases'), { recursive: true });
    const lock = {
      owner: 'elsewhere',
      holder: 'a run in another container',
      host: hostname(),
      pid: Number(gone.stdout.toString()),
      ...here,
      ...elsewhere,
      expiresAt: Date.now() + 300,
    };
    writeFileSync(join(location, '.leases', 'run-1.lock'), JSON.stringify(lock));
    // Where the system tells neither (no /proc), the host name is all there is: a dead pid there
    // is a dead holder, and only the last case stays the same.
    const sameSpace = !recordedHere && Object.values(elsewhere).every((value) => value === undefined);
    if (sameSpace) return;
    await expect(provider.claimLease(location, request('next', head.id))).rejects.toMatchObject({
      code: 'conflict',
      details: { holder: 'a run in another container' },
    });
    await new Promise((resolve) => setTimeout(resolve, 350));
    await expect(provider.claimLease(location, request('next', head.id))).resolves.toMatchObject({
      owner: 'next',
    });
  });

  it('a lock file still being written is held, not taken over; one left unfinished long ago is', async () => {
    // Of 8 processes resuming one checkpoint, one created the lock and had not written it yet when
    // another read it: the empty file was taken for a damaged lock and taken over, its creator went on
    // believing it held it, and both paid for the next task (a CI run of the fencing trial).
    const head = await writeInRun(null);
    mkdirSync(join(location, '.leases'), { recursive: true });
    const lock = join(location, '.leases', 'run-1.lock');
    writeFileSync(lock, '');
    await expect(provider.claimLease(location, request('second', head.id))).rejects.toMatchObject({
      code: 'conflict',
      details: { lineageId: 'run-1' },
    });
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(lock, longAgo, longAgo);
    await expect(provider.claimLease(location, request('second', head.id))).resolves.toMatchObject({
      owner: 'second',
    });
    // A claim never leaves its temp files behind.
    expect(readdirSync(join(location, '.leases'))).toEqual(['run-1.lock']);
  });

  it('renewing extends the lock; lock files never show as branches or checkpoints', async () => {
    const head = await writeInRun(null);
    const lease = await provider.claimLease(location, request('holder', head.id, 1000));
    const renewed = await provider.renewLease(location, { lineageId: 'run-1', owner: 'holder' }, 60_000);
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(Date.parse(lease.expiresAt));
    expect(readdirSync(join(location, '.leases'))).toEqual(['run-1.lock']);
    expect((await provider.list(location)).map((entry) => entry.id)).toEqual([head.id]);
  });
});
