import { CrewlineError } from '@crewline/events';
import { createProviderRegistry, type RawCheckpoint, type StoredCheckpoint } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { type FixtureKind, writeFixture } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { describeKnownError } from './error-boundary.js';
import { openCheckpoint } from './open-location.js';
import { cliProviderRegistry } from './providers.js';

const listedId = 'a1b2c3d4-0000-4000-8000-000000000001';

/**
 * A third-party provider of `bucket://` locations: it lists one checkpoint, whose object its store
 * has since lost, and says so in its own words.
 */
class ExpiringBucketProvider extends InMemoryProvider {
  override parseReference(reference: string): { location: string; id?: string } {
    const hash = reference.lastIndexOf('#');
    return hash < 0
      ? { location: reference }
      : { location: reference.slice(0, hash), id: reference.slice(hash + 1) };
  }

  override async list(): Promise<StoredCheckpoint[]> {
    return [{ id: listedId, parentId: null } as StoredCheckpoint];
  }

  override async read(location: string, id: string): Promise<RawCheckpoint> {
    throw new CrewlineError(
      'provider-bucket',
      'not_found',
      `no checkpoint "${id}" in ${location}: its object expired under the bucket's 30-day lifecycle rule`,
    );
  }
}

function bucketRegistry() {
  const provider = new ExpiringBucketProvider();
  return createProviderRegistry([
    { name: 'bucket', claims: (location) => location.startsWith('bucket://'), create: async () => provider },
  ]);
}

async function notFoundMessage(id: string): Promise<string> {
  const error = await openCheckpoint(id, '/', bucketRegistry(), 'bucket://team', 'pnpm crewline').then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!CrewlineError.hasCode(error, 'not_found')) throw error;
  return describeKnownError(error as CrewlineError);
}

describe('openCheckpoint, a checkpoint not found in location#id', () => {
  it('says it in the CLI words, naming the CLI as it was run, when the provider says nothing more', async () => {
    expect(await notFoundMessage('zzzz')).toBe(
      'no checkpoint "zzzz" in bucket://team; run `pnpm crewline checkpoint list bucket://team` to see its ids',
    );
  });

  it("keeps a provider's own not-found message visible when it says more than that", async () => {
    const message = await notFoundMessage(listedId);
    expect(message).toContain(`run \`pnpm crewline checkpoint list bucket://team\` to see its ids`);
    expect(message).toContain("its object expired under the bucket's 30-day lifecycle rule");
  });

  it.each(['json', 'sqlite'] satisfies FixtureKind[])(
    'adds nothing to the standard message of a built-in provider (%s)',
    async (kind) => {
      const directory = await temporaryDirectory('crewline-open-checkpoint-');
      const registry = cliProviderRegistry();
      const fixture = await writeFixture(kind, directory.path);
      try {
        const error = await openCheckpoint(
          'zzzz',
          directory.path,
          registry,
          fixture.relative,
          'npx crewline',
        ).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(describeKnownError(error as CrewlineError)).toBe(
          `no checkpoint "zzzz" in ./${fixture.relative}; run \`npx crewline checkpoint list ./${fixture.relative}\` to see its ids`,
        );
      } finally {
        await fixture.provider.close?.();
        await registry.close();
        await directory.remove();
      }
    },
  );
});
