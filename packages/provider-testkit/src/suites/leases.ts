import { describe, expect, it } from 'vitest';
import { expectCrewlineError, idsOf } from '../assertions.js';
import type { Harness } from '../harness.js';
import {
  expectClaimHeldBy,
  expectHeldBy,
  holderOf,
  Lineage,
  leaseFixtures,
  longTtlMs,
  pastShortTtlMs,
  shortTtlMs,
  sleep,
} from './lease-fixtures.js';

export function describeLeases(harness: Harness): void {
  describe('leases (fenced lineage heads)', () => {
    const { leasing, setup, otherClaimer, claim, tryWrite } = leaseFixtures(harness);

    it('implements claimLease, renewLease and releaseLease', async (context) => {
      const { provider } = await leasing(context);
      expect(typeof provider.claimLease).toBe('function');
      expect(typeof provider.renewLease).toBe('function');
      expect(typeof provider.releaseLease).toBe('function');
    });

    it('grants a claim of the head: the lease names lineage, owner, holder and when it runs out', async (context) => {
      const { provider, location, lineage } = await setup(context, 2);
      const before = Date.now();
      const lease = await claim(provider, location, lineage.request('alpha'));
      expect(lease).toMatchObject({
        lineageId: lineage.lineageId,
        owner: 'alpha',
        holder: holderOf('alpha'),
      });
      const expiresAt = Date.parse(lease.expiresAt);
      expect(Number.isNaN(expiresAt), `expiresAt ${lease.expiresAt} is an ISO time`).toBe(false);
      expect(expiresAt).toBeGreaterThanOrEqual(before + longTtlMs - 5_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + longTtlMs + 5_000);
    });

    it('of 8 racing claims of one head, exactly one is granted; the 7 others get a conflict naming it', async (context) => {
      const { provider, location, lineage } = await setup(context, 2);
      const owners = ['ada', 'bob', 'cy', 'dee', 'eve', 'fay', 'gus', 'hal'];
      const claimers = [provider];
      while (claimers.length < owners.length) claimers.push(await otherClaimer(provider));
      const results = await Promise.allSettled(
        owners.map((owner, index) => claim(claimers[index]!, location, lineage.request(owner))),
      );
      const granted = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      expect(granted.length, 'claims granted').toBe(1);
      const winner = granted[0]!;
      for (const result of results) {
        if (result.status === 'fulfilled') continue;
        const error = await expectCrewlineError(
          () => Promise.reject(result.reason),
          ['conflict'],
          'a losing claim',
        );
        expectClaimHeldBy(error, lineage.lineageId, winner.holder);
      }
    });

    it('of 8 racing claims of a new run (checkpointId null), exactly one is granted', async (context) => {
      const { provider, location, lineage } = await setup(context, 0);
      const owners = ['ada', 'bob', 'cy', 'dee', 'eve', 'fay', 'gus', 'hal'];
      const claimers = [provider];
      while (claimers.length < owners.length) claimers.push(await otherClaimer(provider));
      const results = await Promise.allSettled(
        owners.map((owner, index) => claim(claimers[index]!, location, lineage.request(owner))),
      );
      expect(results.filter((result) => result.status === 'fulfilled').length).toBe(1);
      const winner = results.find((result) => result.status === 'fulfilled')!.value;
      await lineage.write({ lease: lineage.token(winner.owner) });
      expect(idsOf(await provider.list(location))).toEqual(lineage.ids);
    });

    it('refuses a claim of a checkpoint that is no longer the head, with the head in details', async (context) => {
      const { provider, location, lineage } = await setup(context, 3);
      const [first, second, head] = lineage.ids;
      for (const stale of [first!, second!]) {
        const error = await expectCrewlineError(
          () => claim(provider, location, lineage.request('alpha', { checkpointId: stale })),
          ['conflict'],
          'a claim of a checkpoint that is not the head',
        );
        expect(error.details).toMatchObject({ lineageId: lineage.lineageId, headId: head });
      }
      // A claim of a new run's first checkpoint (null) when the run has checkpoints: not its head either.
      const error = await expectCrewlineError(
        () => claim(provider, location, lineage.request('alpha', { checkpointId: null })),
        ['conflict'],
        'a claim with checkpointId null of a run that has checkpoints',
      );
      expect(error.details).toMatchObject({ lineageId: lineage.lineageId, headId: head });
      // The refused claims took nothing: someone else gets the head at once.
      await claim(await otherClaimer(provider), location, lineage.request('beta'));
    });

    it('refuses a claim of a checkpoint in a run that has none (headId null)', async (context) => {
      const { provider, location } = await leasing(context);
      const written = new Lineage(provider, location);
      await written.write();
      const empty = new Lineage(provider, location);
      const error = await expectCrewlineError(
        () => claim(provider, location, empty.request('alpha', { checkpointId: written.head })),
        ['conflict'],
        'a claim of a checkpoint of another run',
      );
      expect(error.details).toMatchObject({ lineageId: empty.lineageId, headId: null });
    });

    it('lets the holder claim again (its lease goes on), and refuses others meanwhile', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha'));
      await lineage.write({ lease: lineage.token('alpha') });
      const again = await claim(provider, location, lineage.request('alpha'));
      expect(again.owner).toBe('alpha');
      await lineage.write({ lease: lineage.token('alpha') });
      const error = await expectCrewlineError(
        () => claim(provider, location, lineage.request('beta')),
        ['conflict'],
        "a claim of someone else's head",
      );
      expectClaimHeldBy(error, lineage.lineageId, holderOf('alpha'));
    });

    it('stores writes made under the held lease (sync and async), from any instance', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha'));
      await lineage.write({ lease: lineage.token('alpha') });
      await lineage.write({ lease: lineage.token('alpha'), sync: true });
      await lineage.write({ lease: lineage.token('alpha'), provider: await otherClaimer(provider) });
      expect(idsOf(await provider.list(location))).toEqual(lineage.ids);
      expect((await provider.latest(location, { lineageId: lineage.lineageId }))?.id).toBe(lineage.head);
    });

    it('refuses, storing nothing, a write under a lease that was never granted', async (context) => {
      const { lineage } = await setup(context);
      await lineage.expectRefusedWrite(lineage.token('alpha'), 'under a lease never claimed');
    });

    it('refuses, storing nothing, a write under a lease someone else holds, naming the holder', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(await otherClaimer(provider), location, lineage.request('beta'));
      const error = await lineage.expectRefusedWrite(lineage.token('alpha'), "under someone else's lease");
      expectHeldBy(error, lineage.lineageId, holderOf('beta'));
      await lineage.write({ lease: lineage.token('beta') });
    });

    it('refuses, storing nothing, a write under a lease that ran out, even when nobody took it over', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha', { ttlMs: shortTtlMs }));
      await tryWrite(lineage, lineage.token('alpha'));
      await sleep(pastShortTtlMs);
      await lineage.expectRefusedWrite(lineage.token('alpha'), 'under a lease that ran out');
    });

    it('refuses, storing nothing, a write under a lease of another run', async (context) => {
      const { provider, location, lineage } = await setup(context);
      const other = new Lineage(provider, location);
      await other.write();
      await claim(provider, location, other.request('alpha'));
      await lineage.expectRefusedWrite(other.token('alpha'), "under another run's lease", [
        'conflict',
        'invalid_argument',
      ]);
    });

    it('lets a lease that ran out be taken over; the old holder is then refused (writes and renewals)', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha', { ttlMs: shortTtlMs }));
      await sleep(pastShortTtlMs);
      const successor = await otherClaimer(provider);
      const taken = await claim(successor, location, lineage.request('beta'));
      expect(taken.owner).toBe('beta');
      const refusal = await lineage.expectRefusedWrite(lineage.token('alpha'), 'under a lease taken over');
      expectHeldBy(refusal, lineage.lineageId, holderOf('beta'));
      const renewal = await expectCrewlineError(
        () => provider.renewLease!(location, lineage.token('alpha'), longTtlMs),
        ['conflict'],
        'renewing a lease taken over',
      );
      expect(renewal.message).toContain(holderOf('beta'));
      expect(renewal.details?.lineageId).toBe(lineage.lineageId);
      await lineage.write({ lease: lineage.token('beta'), provider: successor });
      expect(idsOf(await provider.list(location))).toEqual(lineage.ids);
    });

    it('renewing extends the lease past its first end: writes go on, others stay refused', async (context) => {
      const { provider, location, lineage } = await setup(context);
      const first = await claim(provider, location, lineage.request('alpha', { ttlMs: shortTtlMs }));
      await tryWrite(lineage, lineage.token('alpha'));
      const renewed = await provider.renewLease!(location, lineage.token('alpha'), longTtlMs);
      expect(renewed).toMatchObject({
        lineageId: lineage.lineageId,
        owner: 'alpha',
        holder: holderOf('alpha'),
      });
      expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(Date.parse(first.expiresAt));
      await sleep(pastShortTtlMs);
      await lineage.write({ lease: lineage.token('alpha') });
      const error = await expectCrewlineError(
        () => claim(provider, location, lineage.request('beta')),
        ['conflict'],
        'a claim of a renewed lease',
      );
      expectClaimHeldBy(error, lineage.lineageId, holderOf('alpha'));
    });

    it('renews a lease that ran out when nobody claimed it since; its writes are accepted again', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha', { ttlMs: shortTtlMs }));
      await tryWrite(lineage, lineage.token('alpha'));
      await sleep(pastShortTtlMs);
      await provider.renewLease!(location, lineage.token('alpha'), longTtlMs);
      await lineage.write({ lease: lineage.token('alpha') });
      expect(idsOf(await provider.list(location))).toEqual(lineage.ids);
    });

    it('lets a holder whose lease ran out claim its head again when nobody took it', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha', { ttlMs: shortTtlMs }));
      await tryWrite(lineage, lineage.token('alpha'));
      await sleep(pastShortTtlMs);
      await claim(provider, location, lineage.request('alpha'));
      await lineage.write({ lease: lineage.token('alpha') });
      expect(idsOf(await provider.list(location))).toEqual(lineage.ids);
    });

    it('refuses to renew a lease that was never granted or was released', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await expectCrewlineError(
        () => provider.renewLease!(location, lineage.token('alpha'), longTtlMs),
        ['conflict'],
        'renewing a lease never claimed',
      );
      await claim(provider, location, lineage.request('alpha'));
      await provider.releaseLease!(location, lineage.token('alpha'));
      const error = await expectCrewlineError(
        () => provider.renewLease!(location, lineage.token('alpha'), longTtlMs),
        ['conflict'],
        'renewing a released lease',
      );
      expect(error.details?.lineageId).toBe(lineage.lineageId);
    });

    it('release lets another claim at once; the releasing run is then refused', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha'));
      await lineage.write({ lease: lineage.token('alpha') });
      await provider.releaseLease!(location, lineage.token('alpha'));
      await lineage.expectRefusedWrite(lineage.token('alpha'), 'after its own release');
      const successor = await otherClaimer(provider);
      await claim(successor, location, lineage.request('beta'));
      await lineage.expectRefusedWrite(lineage.token('alpha'), 'under a released lease');
      await lineage.write({ lease: lineage.token('beta'), provider: successor });
    });

    it('a write sees a release made through another instance since its previous write', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha'));
      await lineage.write({ lease: lineage.token('alpha') });
      await lineage.write({ lease: lineage.token('alpha'), sync: true });
      const other = await otherClaimer(provider);
      await other.releaseLease!(location, lineage.token('alpha'));
      await lineage.expectRefusedWrite(lineage.token('alpha'), 'after a release through another instance');
    });

    it('a release by someone who does not hold the lease does nothing', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha'));
      const stranger = await otherClaimer(provider);
      await stranger.releaseLease!(location, lineage.token('beta'));
      await stranger.releaseLease!(location, { lineageId: 'no-such-run', owner: 'alpha' });
      const error = await expectCrewlineError(
        () => claim(stranger, location, lineage.request('beta')),
        ['conflict'],
        'a claim after a release by a non-holder',
      );
      expectClaimHeldBy(error, lineage.lineageId, holderOf('alpha'));
      await lineage.write({ lease: lineage.token('alpha') });
      // Releasing twice is harmless too.
      await provider.releaseLease!(location, lineage.token('alpha'));
      await provider.releaseLease!(location, lineage.token('alpha'));
    });

    it('claims on different runs are independent', async (context) => {
      const { provider, location, lineage } = await setup(context);
      const other = new Lineage(provider, location);
      await other.write();
      await claim(provider, location, lineage.request('alpha'));
      await claim(await otherClaimer(provider), location, other.request('beta'));
      await lineage.write({ lease: lineage.token('alpha') });
      await other.write({ lease: other.token('beta') });
      await provider.releaseLease!(location, lineage.token('alpha'));
      await expectCrewlineError(
        () => claim(provider, location, other.request('gamma')),
        ['conflict'],
        "a claim of the other run's head after this run's release",
      );
    });

    it('leases belong to their location', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(provider, location, lineage.request('alpha'));
      const elsewhere = provider.resolveLocation(await harness.location());
      const copy = new Lineage(provider, elsewhere);
      // Same run id in another store: nobody holds it there.
      const request = { ...copy.request('beta'), lineageId: lineage.lineageId };
      await claim(provider, elsewhere, request);
    });

    it('does not check a write that carries no lease (runs that do not fence)', async (context) => {
      const { provider, location, lineage } = await setup(context);
      await claim(await otherClaimer(provider), location, lineage.request('beta'));
      await lineage.write();
      await lineage.write({ sync: true });
      expect(idsOf(await provider.list(location))).toEqual(lineage.ids);
    });

    it('deleting and pruning checkpoints leaves the lease alone', async (context) => {
      const { provider, location, lineage } = await setup(context, 3);
      await claim(provider, location, lineage.request('alpha'));
      await provider.prune(location, { keep: 1, lineageId: lineage.lineageId });
      for (const id of lineage.ids) await provider.delete(location, id);
      expect(await provider.list(location, { lineageId: lineage.lineageId })).toEqual([]);
      const successor = await otherClaimer(provider);
      const error = await expectCrewlineError(
        () => claim(successor, location, lineage.request('beta', { checkpointId: null })),
        ['conflict'],
        'a claim after the run lost its checkpoints',
      );
      expectClaimHeldBy(error, lineage.lineageId, holderOf('alpha'));
      await lineage.write({ lease: lineage.token('alpha') });
    });

    it('refuses bad lease arguments with invalid_argument', async (context) => {
      const { provider, location, lineage } = await setup(context);
      for (const ttlMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expectCrewlineError(
          () => claim(provider, location, lineage.request('alpha', { ttlMs })),
          ['invalid_argument'],
          `a claim with ttlMs ${ttlMs}`,
        );
      }
      for (const bad of [{ owner: '' }, { lineageId: '' }]) {
        await expectCrewlineError(
          () => claim(provider, location, lineage.request('alpha', bad)),
          ['invalid_argument'],
          `a claim with ${JSON.stringify(bad)}`,
        );
      }
      await claim(provider, location, lineage.request('alpha'));
      await expectCrewlineError(
        () => provider.renewLease!(location, lineage.token('alpha'), 0),
        ['invalid_argument'],
        'a renewal with ttlMs 0',
      );
      // None of the refused calls took or changed the lease.
      await lineage.write({ lease: lineage.token('alpha') });
    });
  });
}
