import type { CheckpointProvider, StoredCheckpoint } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import type { OpenedLocation } from '../core/open-location.js';
import { ExplorerCheckpoints } from './explorer-checkpoints.js';

/** A listing the test finishes when it likes, holding the checkpoints of `ids`. */
interface HeldListing {
  finish(ids: string[]): void;
}

/**
 * A location whose listings wait for the test: each call to `list` is recorded and answers when the
 * test finishes it, so which request shares which listing is seen without timing anything.
 */
function heldLocation(): { opened: OpenedLocation; listings: HeldListing[] } {
  const listings: HeldListing[] = [];
  const provider = {
    list: () =>
      new Promise<StoredCheckpoint[]>((resolve) => {
        listings.push({
          finish: (ids) =>
            resolve(ids.map((id) => ({ id, reference: `held#${id}` }) as unknown as StoredCheckpoint)),
        });
      }),
  } as unknown as CheckpointProvider;
  return { opened: { kind: 'held', provider, location: 'held' }, listings };
}

const ids = (checkpoints: StoredCheckpoint[]) => checkpoints.map((checkpoint) => checkpoint.id);

// Review RF-6: with no page open, every request dropped the kept listing and took its own, also
// while another request's listing was in flight; requests that arrived before a listing started can
// share it, as it holds everything stored when they came.
describe('requests that must see the store as it is when they come (no page open)', () => {
  it('share a listing that started after they all arrived', async () => {
    const { opened, listings } = heldLocation();
    const checkpoints = new ExplorerCheckpoints(opened);
    const first = checkpoints.reader(true);
    const second = checkpoints.reader(true);
    const firstListing = first.list();
    const secondListing = second.list();
    expect(listings).toHaveLength(1);
    listings[0]!.finish(['a']);
    expect(ids(await firstListing)).toEqual(['a']);
    expect(ids(await secondListing)).toEqual(['a']);
  });

  it('take a new listing when the one in flight started before they came, and leave it to its requests', async () => {
    const { opened, listings } = heldLocation();
    const checkpoints = new ExplorerCheckpoints(opened);
    const early = checkpoints.reader(true);
    const earlyListing = early.list();
    // Arrives while the first listing is in flight: it may miss what was written just before.
    const late = checkpoints.reader(true);
    const alsoEarly = checkpoints.reader(true);
    const lateListing = late.list();
    expect(listings).toHaveLength(2);
    // Arrived before the second listing started, so it shares that one, not a third.
    const alsoLateListing = alsoEarly.list();
    expect(listings).toHaveLength(2);
    listings[1]!.finish(['a', 'b']);
    listings[0]!.finish(['a']);
    expect(ids(await earlyListing)).toEqual(['a']);
    expect(ids(await lateListing)).toEqual(['a', 'b']);
    expect(ids(await alsoLateListing)).toEqual(['a', 'b']);
  });

  it('list again when they arrive after a listing finished', async () => {
    const { opened, listings } = heldLocation();
    const checkpoints = new ExplorerCheckpoints(opened);
    const firstListing = checkpoints.reader(true).list();
    listings[0]!.finish(['a']);
    await firstListing;
    const secondListing = checkpoints.reader(true).list();
    expect(listings).toHaveLength(2);
    listings[1]!.finish(['a', 'b']);
    expect(ids(await secondListing)).toEqual(['a', 'b']);
  });
});

describe('requests while a page listens', () => {
  it('share the kept listing until it is forgotten, and a forgotten one still answers the requests that took it', async () => {
    const { opened, listings } = heldLocation();
    const checkpoints = new ExplorerCheckpoints(opened);
    const firstListing = checkpoints.reader(false).list();
    listings[0]!.finish(['a']);
    await firstListing;
    expect(ids(await checkpoints.reader(false).list())).toEqual(['a']);
    expect(listings).toHaveLength(1);
    const beforeChange = checkpoints.reader(false).list();
    checkpoints.forget();
    const afterChange = checkpoints.reader(false).list();
    expect(listings).toHaveLength(2);
    listings[1]!.finish(['a', 'b']);
    expect(ids(await beforeChange)).toEqual(['a']);
    expect(ids(await afterChange)).toEqual(['a', 'b']);
  });
});
