import { describe, expect, it } from 'vitest';
import { parseQueueLocation } from './connection.js';
import { RunQueue } from './run-queue.js';

// A fake server: nothing here connects.
const server = 'postgres://app@db.internal:5432/agents';

describe('parseQueueLocation', () => {
  it('keeps the password out of display, in the user info and in every credential parameter', () => {
    const location = parseQueueLocation(
      'postgres://app:UserInfoPw@db.internal:5432/agents?password=QueryPw1&sslpassword=KeyPass99&sslmode=require',
    );
    // Before: `display` cleared only the user info, and `runs list` printed ?password=QueryPw1.
    expect(location.display).toBe('postgres://app@db.internal:5432/agents?sslmode=require&schema=crewline');
    for (const secret of ['UserInfoPw', 'QueryPw1', 'KeyPass99'])
      expect(location.display).not.toContain(secret);
    // pg and the checkpoint provider still get every credential: they need them to log in.
    expect(location.connectionString).toContain('password=QueryPw1');
    expect(location.connectionString).toContain('sslpassword=KeyPass99');
    expect(location.checkpointLocation).toContain('password=QueryPw1');
  });

  it('hides a credential parameter of a postgresql:// URL that names its schema', () => {
    const location = parseQueueLocation('postgresql://app@db.internal/agents?schema=team_a&password=p%21w');
    expect(location.display).toBe('postgresql://app@db.internal/agents?schema=team_a');
    expect(location.schema).toBe('team_a');
  });
});

it('RunQueue.location (what `crewline runs list` prints) carries no ?password=', async () => {
  const queue = new RunQueue({ location: `${server}?password=Hunter2Secret` });
  try {
    expect(queue.location).toBe('postgres://app@db.internal:5432/agents?schema=crewline');
  } finally {
    await queue.close().catch(() => undefined);
  }
});
