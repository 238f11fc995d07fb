import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonProvider } from './json-provider.js';
import { assertInside, branchDirectory } from './paths.js';

describe('paths never leave the location', () => {
  let sandbox: string;
  let location: string;
  let outside: string;
  beforeEach(() => {
    sandbox = mkdtempSync(join(tmpdir(), 'crewline-json-paths-'));
    location = join(sandbox, 'checkpoints');
    outside = join(sandbox, 'outside');
    mkdirSync(location);
    mkdirSync(outside);
  });
  afterEach(() => rmSync(sandbox, { recursive: true, force: true }));

  it('maps valid branches inside and refuses traversal names', () => {
    expect(branchDirectory(location, 'fork/a-1')).toBe(join(location, 'fork', 'a-1'));
    for (const branch of ['../x', '/abs', 'a/../../b', 'a\u0000b', '..', 'a/./b', '', 'a\\..\\b']) {
      expect(() => branchDirectory(location, branch)).toThrow(
        expect.objectContaining({ code: 'invalid_name' }),
      );
    }
    expect(() => assertInside(location, join(location, '..', 'x'), 'test')).toThrow(/outside the location/);
    expect(() => assertInside(location, location, 'test')).toThrow(/outside the location/);
  });

  it('refuses to write through a symlinked branch directory that points outside', async () => {
    symlinkSync(outside, join(location, 'evil'), 'dir');
    const provider = new JsonProvider();
    const write = buildCheckpointWrite({ metadata: { branch: 'evil/deeper' } });
    expect(() => provider.writeSync(location, write)).toThrow(
      expect.objectContaining({ code: 'invalid_name' }),
    );
    await expect(
      provider.write(location, buildCheckpointWrite({ metadata: { branch: 'evil' } })),
    ).rejects.toMatchObject({
      code: 'invalid_name',
    });
    expect(readdirSync(outside)).toEqual([]);
    await expect(provider.list(location, { branch: 'evil' })).rejects.toMatchObject({ code: 'invalid_name' });
  });

  it('never lists or reads checkpoints reached through links', async () => {
    const provider = new JsonProvider();
    // A real checkpoint outside, made visible inside through a directory link and a file link.
    const foreign = await provider.write(outside, buildCheckpointWrite({ metadata: { branch: 'main' } }));
    symlinkSync(join(outside, 'main'), join(location, 'linked'), 'dir');
    mkdirSync(join(location, 'main'));
    const fileLink = join(location, 'main', `${foreign.id.slice(0, -1)}0_p-none.json`);
    symlinkSync(foreign.reference, fileLink);
    expect(await provider.list(location)).toEqual([]);
    await expect(provider.read(location, foreign.id)).rejects.toMatchObject({ code: 'not_found' });
    const own = await provider.write(location, buildCheckpointWrite());
    expect((await provider.list(location)).map((entry) => entry.id)).toEqual([own.id]);
  });

  it('refuses a branch whose directory position is taken by a file', async () => {
    writeFileSync(join(location, 'main'), 'not a directory');
    const provider = new JsonProvider();
    await expect(provider.write(location, buildCheckpointWrite())).rejects.toMatchObject({
      code: 'write_failed',
    });
    expect(await provider.list(location, { branch: 'main' })).toEqual([]);
    expect(existsSync(join(sandbox, 'main'))).toBe(false);
  });
});
