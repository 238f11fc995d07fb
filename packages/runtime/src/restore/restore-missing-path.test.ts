// Trial 3: `restoreFrom: './nosuchdir/x.db'` said "no checkpoints in …; run something with
// checkpointing enabled first", as if the database were there and empty; the CLI says the path does not exist.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Crew } from '../crew/crew.js';

describe('restoreFrom a path that does not exist', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'crewline-restore-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  for (const name of ['nosuchdir/x.db', 'nosuchdir']) {
    it(`says ${name} does not exist`, async () => {
      const path = join(directory, name);
      const refused = await Crew.fromCheckpoint({ restoreFrom: path }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toMatchObject({ code: 'not_found' });
      expect((refused as Error).message).toContain(`"${path}" does not exist; check the path`);
      expect((refused as Error).message).not.toContain('run something');
    });
  }

  it('still says an existing empty directory holds no checkpoints yet', async () => {
    const refused = await Crew.fromCheckpoint({ restoreFrom: directory }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((refused as Error).message).toContain('run something with checkpointing enabled first');
  });
});
