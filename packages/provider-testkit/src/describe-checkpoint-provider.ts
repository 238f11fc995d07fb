import { describe } from 'vitest';
import { createHarness } from './harness.js';
import type { ProviderTestkitOptions } from './options.js';
import { describeBadNames } from './suites/bad-names.js';
import { describeBadStorage } from './suites/bad-storage.js';
import { describeConcurrency } from './suites/concurrency.js';
import { describeIsolation } from './suites/isolation.js';
import { describeLatestPruneDelete } from './suites/latest-prune-delete.js';
import { describeLeases } from './suites/leases.js';
import { describeLineage } from './suites/lineage.js';
import { describeList } from './suites/list.js';
import { describeRunEnded } from './suites/run-ended.js';
import { describeSecrets } from './suites/secrets.js';
import { describeStoredIds } from './suites/stored-ids.js';
import { describeWriteBatch } from './suites/write-batch.js';
import { describeWriteAndRead } from './suites/write-read.js';

/**
 * Registers the crewline provider conformance suite (vitest `describe`/`it` blocks) for one
 * provider. Call it at the top level of a test file; every test gets a fresh provider and location.
 *
 * ```ts
 * describeCheckpointProvider({
 *   name: 'MyProvider',
 *   createProvider: () => new MyProvider(),
 *   createLocation: () => mkdtempSync(join(tmpdir(), 'my-provider-')),
 *   removeLocation: (location) => rmSync(location, { recursive: true, force: true }),
 * });
 * ```
 */
export function describeCheckpointProvider(options: ProviderTestkitOptions): void {
  describe(`${options.name} meets the crewline checkpoint provider contract`, () => {
    const harness = createHarness(options);
    describeWriteAndRead(harness);
    describeWriteBatch(harness);
    describeRunEnded(harness);
    describeStoredIds(harness);
    describeList(harness);
    describeLatestPruneDelete(harness);
    describeLineage(harness);
    describeIsolation(harness);
    describeConcurrency(harness);
    describeBadNames(harness);
    describeBadStorage(harness);
    describeSecrets(harness);
    describeLeases(harness);
  });
}
