/**
 * The leases this process holds: granted to a claim of one of its providers, and neither released
 * nor found lost since. By location (canonical, as a `SchemaHandle` names it) and lineage, the owner
 * token of each claim and the holder it was claimed for.
 *
 * A refusal names its holder by text only (`<what> on <host>, pid <pid>`), which proves nothing:
 * containers that share a host name have pid spaces of their own. The owner token of a lease this
 * process was granted does prove it (it is random, and only this process's claims and writes carry
 * it), so a refused claim finds here which tokens to ask the lease row about (see `claimLease`).
 *
 * One table per process, on a `globalThis` symbol: two kickoffs of one state in one program may claim
 * through two providers, or through two copies of this package.
 */
type HeldLeases = Map<string, Map<string, string>>;

/** Versioned: a copy of this package that keeps another shape uses another table. */
const tableKey = Symbol.for('@crewline/provider-postgres:leases-of-this-process:v1');

/**
 * Lineages remembered at most; the oldest are forgotten past it. A lease lost on a write is never
 * released by its holder, so its entry stays until a claim of its lineage looks; forgetting one only
 * leaves a refusal without "this process" in it.
 */
const rememberedLineages = 10_000;

function heldLeases(): HeldLeases {
  const store = globalThis as { [tableKey]?: HeldLeases };
  store[tableKey] ??= new Map();
  return store[tableKey];
}

function keyOf(location: string, lineageId: string): string {
  return `${location}\n${lineageId}`;
}

/** A claim of this process was granted the lease of `lineageId` as `owner`, for `holder`. */
export function rememberHeldLease(location: string, lineageId: string, owner: string, holder: string): void {
  const table = heldLeases();
  const key = keyOf(location, lineageId);
  const owners = table.get(key) ?? new Map<string, string>();
  owners.set(owner, holder);
  // Inserted again at the end: the lineages forgotten first are those claimed longest ago.
  table.delete(key);
  table.set(key, owners);
  while (table.size > rememberedLineages) {
    const oldest = table.keys().next().value;
    if (oldest === undefined) break;
    table.delete(oldest);
  }
}

/** `owner` does not hold the lease of `lineageId` any more (released, lost, or refused a claim). */
export function forgetHeldLease(location: string, lineageId: string, owner: string): void {
  const table = heldLeases();
  const key = keyOf(location, lineageId);
  const owners = table.get(key);
  if (owners === undefined) return;
  owners.delete(owner);
  if (owners.size === 0) table.delete(key);
}

/** The owner tokens this process holds the lease of `lineageId` with, claimed for `holder`. */
export function ownersHeldFor(location: string, lineageId: string, holder: string): string[] {
  const owners = heldLeases().get(keyOf(location, lineageId));
  if (owners === undefined) return [];
  return [...owners].filter(([, claimedFor]) => claimedFor === holder).map(([owner]) => owner);
}
