import { describe, expect, it } from 'vitest';
import { leaseSafetyMarginMs, localLeaseDeadline } from './lease-deadline.js';

describe('leaseSafetyMarginMs', () => {
  it('is a fifth of the lease, rounded down to whole milliseconds', () => {
    expect(leaseSafetyMarginMs(20_000)).toBe(4_000);
    expect(leaseSafetyMarginMs(1_000)).toBe(200);
    expect(leaseSafetyMarginMs(999)).toBe(199);
    expect(leaseSafetyMarginMs(4)).toBe(0);
  });

  it('leaves room for one failed renewal of the three a lease gets, not two', () => {
    for (const ttlMs of [600, 1_000, 20_000, 60_000]) {
      const renewalIntervalMs = ttlMs / 3;
      const lastConfirmedRenewalEnds = ttlMs - leaseSafetyMarginMs(ttlMs);
      expect(lastConfirmedRenewalEnds).toBeGreaterThan(renewalIntervalMs * 2);
      expect(lastConfirmedRenewalEnds).toBeLessThan(renewalIntervalMs * 3);
    }
  });
});

describe('localLeaseDeadline', () => {
  it('counts from when the confirmed claim or renewal was sent, a safety margin short of the lease', () => {
    expect(localLeaseDeadline(1_500, 1_000)).toBe(2_300);
    expect(localLeaseDeadline(0, 20_000)).toBe(16_000);
  });

  it('comes before the store could let the lease run out, however late the store received it', () => {
    const sentAt = 12_345.678;
    for (const ttlMs of [1_000, 20_000]) {
      const receivedAt = sentAt + 3;
      expect(localLeaseDeadline(sentAt, ttlMs)).toBeLessThan(receivedAt + ttlMs);
      expect(localLeaseDeadline(sentAt, ttlMs)).toBeGreaterThan(sentAt);
    }
  });
});
