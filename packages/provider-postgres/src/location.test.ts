import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { credentialsOf, parseLocation, parseReference } from './location.js';
import { PostgresProvider } from './postgres-provider.js';

describe('Postgres locations', () => {
  it('removes the password from the location, keeps it in memory for connecting, and names the schema', () => {
    const parsed = parseLocation('postgres://app:s3cr%40t-pass@db.example.com:5433/runs', 'crewline');
    expect(parsed.location).toBe('postgres://app@db.example.com:5433/runs?schema=crewline');
    expect(parsed.server).toBe('postgres://app@db.example.com:5433/runs');
    expect(parsed.schema).toBe('crewline');
    expect(credentialsOf(parsed.server).get('password')).toBe('s3cr@t-pass');
  });

  it('takes credentials out of the query too, and the schema from ?schema=', () => {
    const parsed = parseLocation(
      'postgresql://app@db/runs?sslmode=verify-full&password=q-secret-1&schema=team_a&sslpassword=k-secret-2',
      'crewline',
    );
    expect(parsed.location).toBe('postgresql://app@db/runs?sslmode=verify-full&schema=team_a');
    expect(parsed.location).not.toContain('secret');
    expect(parsed.schema).toBe('team_a');
    expect(credentialsOf(parsed.server).get('password')).toBe('q-secret-1');
    expect(credentialsOf(parsed.server).get('sslpassword')).toBe('k-secret-2');
  });

  it('is idempotent, and a redacted password is never taken for the password', () => {
    const once = parseLocation('POSTGRES://app:pw-one-1234@db/runs', 'other').location;
    expect(once).toBe('postgres://app@db/runs?schema=other');
    expect(parseLocation(once, 'crewline').location).toBe(once);
    const server = parseLocation('postgres://app:[REDACTED]@db/runs', 'x').server;
    // The earlier real password of that server stays; "[REDACTED]" is not a password.
    expect(credentialsOf(server).get('password')).toBe('pw-one-1234');
  });

  it('understands unix sockets, in the host or in ?host=', () => {
    expect(parseLocation('postgres://app@%2Fvar%2Frun%2Fpostgresql:5432/runs', 'crewline').location).toBe(
      'postgres://app@%2Fvar%2Frun%2Fpostgresql:5432/runs?schema=crewline',
    );
    expect(parseLocation('postgresql:///runs?host=/tmp/pg', 'crewline').location).toBe(
      'postgresql:///runs?host=%2Ftmp%2Fpg&schema=crewline',
    );
  });

  it('refuses schema names it cannot quote safely, and URLs it cannot use, without quoting a password', () => {
    for (const bad of ['a-b', '1abc', 'x"; drop', '', 'a'.repeat(64)]) {
      expect(() => parseLocation(`postgres://db/runs?schema=${encodeURIComponent(bad)}`, 'crewline')).toThrow(
        /schema/,
      );
    }
    for (const bad of [
      'mysql://a:pw-zzz@b/c',
      'postgres://a:pw-zzz@[bad/c',
      'postgres://a:pw-zzz@b/c#frag',
    ]) {
      try {
        parseLocation(bad, 'crewline');
        expect.unreachable(`${bad} was accepted`);
      } catch (error) {
        expect(CrewlineError.hasCode(error, 'invalid_config')).toBe(true);
        expect((error as Error).message).not.toContain('pw-zzz');
      }
    }
  });

  it('parses references: url#id, and a bare url for its latest', () => {
    expect(
      parseReference('postgres://app:pw-ref-5678@db/runs?schema=s#20260101T000000000-abcdef12', 'crewline'),
    ).toEqual({
      location: 'postgres://app@db/runs?schema=s',
      id: '20260101T000000000-abcdef12',
    });
    expect(parseReference('postgres://db/runs', 'crewline')).toEqual({
      location: 'postgres://db/runs?schema=crewline',
    });
    expect(parseReference('./checkpoints.db#x', 'crewline')).toBeUndefined();
    expect(parseReference('/tmp/dir', 'crewline')).toBeUndefined();
  });

  it('the provider resolves with its own default schema; the URL wins over it', () => {
    const provider = new PostgresProvider({ schema: 'mine' });
    expect(provider.resolveLocation('postgres://db/runs')).toBe('postgres://db/runs?schema=mine');
    expect(provider.resolveLocation('postgres://db/runs?schema=theirs')).toBe(
      'postgres://db/runs?schema=theirs',
    );
    expect(provider.parseReference('postgres://db/runs#id-1')).toEqual({
      location: 'postgres://db/runs?schema=mine',
      id: 'id-1',
    });
  });

  it('validates its options', () => {
    expect(() => new PostgresProvider({ schema: 'bad-name' })).toThrow(/schema/);
    expect(() => new PostgresProvider({ poolSize: 0 })).toThrow(/poolSize/);
    expect(() => new PostgresProvider({ location: 'x' } as never)).toThrow(/unknown option "location"/);
    expect(new PostgresProvider().options).toMatchObject({
      schema: 'crewline',
      poolSize: 10,
      synchronousCommit: 'on',
    });
  });
});
