import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectCrewlineError, expectRefusedOrEmpty } from '../assertions.js';
import { buildCheckpointWrite } from '../fixtures/test-run.js';
import type { Harness } from '../harness.js';
import { siblingNames } from '../storage-scan.js';

const nameCodes = ['invalid_name', 'invalid_argument'] as const;
const lookupCodes = ['invalid_name', 'invalid_argument', 'not_found'] as const;

/** Names that try to leave the location; each carries a unique token to look for afterwards. */
function traversalNames(token: string) {
  const absolute = join(tmpdir(), token);
  const shared = [
    `../${token}`,
    absolute,
    `/${token}`,
    `a/../../${token}`,
    `x\u0000${token}`,
    `..\\${token}`,
    '..',
    '.',
    '',
    `.${token}`,
  ];
  return {
    branches: [...shared, 'a//b', 'trailing/', `${'b'.repeat(150)}/${'c'.repeat(60)}`],
    ids: [...shared, `sub/${token}`, 'i'.repeat(129)],
    escapes: [absolute, `/${token}`],
  };
}

export function describeBadNames(harness: Harness): void {
  describe('bad input: traversal-named branches and ids', () => {
    it('refuses to write them with a typed error, and writes nothing outside the location', async () => {
      const { provider, location } = await harness.setup();
      const token = `crewline-escape-${randomBytes(4).toString('hex')}`;
      const names = traversalNames(token);
      const siblingsBefore = siblingNames(location);
      const attempts = [
        ...names.branches.map((branch) => ({ branch })),
        ...names.ids.map((id) => ({ id })),
        ...names.ids.filter((id) => id !== '').map((parentId) => ({ parentId })),
      ];
      for (const metadata of attempts) {
        const what = `write with ${JSON.stringify(metadata)}`;
        await expectCrewlineError(
          () => provider.write(location, buildCheckpointWrite({ metadata })),
          nameCodes,
          what,
        );
        if (provider.capabilities.syncWrite && provider.writeSync) {
          const writeSync = provider.writeSync.bind(provider);
          await expectCrewlineError(
            () => writeSync(location, buildCheckpointWrite({ metadata })),
            nameCodes,
            `sync ${what}`,
          );
        }
      }
      expect(await provider.list(location)).toEqual([]);
      for (const outside of names.escapes) expect(existsSync(outside), `${outside} was created`).toBe(false);
      const created = [...siblingNames(location)].filter((name) => !siblingsBefore.has(name));
      expect(created.filter((name) => name.includes(token))).toEqual([]);
    });

    it('refuses or finds nothing when reading, deleting, listing or pruning them', async () => {
      const { provider, location } = await harness.setup();
      const kept = buildCheckpointWrite();
      await provider.write(location, kept);
      const token = `crewline-escape-${randomBytes(4).toString('hex')}`;
      const names = traversalNames(token);
      for (const id of names.ids) {
        await expectCrewlineError(
          () => provider.read(location, id),
          lookupCodes,
          `read(${JSON.stringify(id)})`,
        );
        await expectRefusedOrEmpty(
          () => provider.delete(location, id),
          lookupCodes,
          (value) => value === false,
          `delete(${JSON.stringify(id)})`,
        );
      }
      for (const branch of names.branches) {
        const label = JSON.stringify(branch);
        await expectRefusedOrEmpty(
          () => provider.list(location, { branch }),
          lookupCodes,
          (value) => Array.isArray(value) && value.length === 0,
          `list({ branch: ${label} })`,
        );
        await expectRefusedOrEmpty(
          () => provider.latest(location, { branch }),
          lookupCodes,
          (value) => value === undefined,
          `latest({ branch: ${label} })`,
        );
        await expectRefusedOrEmpty(
          () => provider.prune(location, { branch, keep: 1 }),
          lookupCodes,
          (value) => (value as { removed: unknown[] }).removed.length === 0,
          `prune({ branch: ${label} })`,
        );
      }
      expect((await provider.list(location)).map((entry) => entry.id)).toEqual([kept.metadata.id]);
    });
  });

  describe('bad input: prune options', () => {
    it('refuses a keep below 1, a fractional or NaN keep and an invalid date, removing nothing', async () => {
      const { provider, location } = await harness.setup();
      await provider.write(location, buildCheckpointWrite());
      await provider.write(location, buildCheckpointWrite());
      const before = await provider.list(location);
      for (const options of [
        { keep: 0 },
        { keep: -1 },
        { keep: 1.5 },
        { keep: Number.NaN },
        { olderThan: new Date('not a date') },
      ]) {
        await expectCrewlineError(
          () => provider.prune(location, options),
          ['invalid_argument'],
          `prune(${String(Object.entries(options)[0])})`,
        );
      }
      expect(await provider.list(location)).toEqual(before);
    });
  });
}
