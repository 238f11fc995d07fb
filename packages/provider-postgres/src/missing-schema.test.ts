// A location whose schema does not exist (a typo in ?schema=) is said to be missing, with the same
// code a missing directory or database file gets (`not_found`: the CLI's exit code 3), naming the
// schema, the schemas of this server that hold checkpoints, and how to fix it. A schema nothing was
// written to yet still lists nothing (the provider contract): checking is asked for.
import { CrewlineError } from '@crewline/events';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { expect, it } from 'vitest';
import { PostgresProvider } from './postgres-provider.js';
import {
  describeWithPostgres,
  temporarySchemaName,
  useTemporaryLocations,
  withServer,
} from './test-support/test-server.js';

const temporary = useTemporaryLocations();

function provider(): PostgresProvider {
  return temporary.track(new PostgresProvider({ poolSize: 2 }));
}

describeWithPostgres('a location whose schema does not exist', () => {
  it('is refused by read and by checkLocationExists as not_found, naming the schema and the fix', async () => {
    const written = temporarySchemaName();
    await provider().write(temporary.location(written), buildCheckpointWrite());
    const missing = `${written}x`;
    const location = temporary.location(missing);
    const reader = provider();
    for (const attempt of [
      () => reader.read(location, '20260101T000000000-00000000'),
      () => reader.checkLocationExists(location),
    ]) {
      const error = await attempt().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(CrewlineError.hasCode(error, 'not_found'), String(error)).toBe(true);
      const { message } = error as Error;
      expect(message).toMatch(
        /^\[provider-postgres\] schema "test_[0-9a-f]+x" does not exist in postgres:\/\//,
      );
      expect(message).toContain('?schema=');
      // The schemas that do hold checkpoints, the one meant among them.
      expect(message).toContain(`"${written}"`);
    }
    // Listing keeps the contract: a location nothing was written to lists nothing.
    expect(await reader.list(location)).toEqual([]);
  });

  it('is not refused once the schema exists, empty or holding checkpoints', async () => {
    const empty = temporarySchemaName();
    const emptyLocation = temporary.location(empty);
    await withServer((client) => client.query(`CREATE SCHEMA "${empty}"`));
    const holding = temporary.location();
    await provider().write(holding, buildCheckpointWrite());
    const reader = provider();
    await expect(reader.checkLocationExists(emptyLocation)).resolves.toBeUndefined();
    await expect(reader.checkLocationExists(holding)).resolves.toBeUndefined();
  });
});
