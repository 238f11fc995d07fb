import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { createProviderRegistry, loadCheckpoint, providerEntryOf } from '@crewline/runtime-state';
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

  /** The typed error of a link inside the location: it names the link and says how to fix it. */
  const linkRefused = (link: string) => ({
    code: 'invalid_name',
    message: expect.stringContaining(
      `[provider-json] "${link}" inside the location "${location}" is a symbolic link`,
    ),
  });

  it('refuses a checkpoint reached through a linked branch directory, for reads and writes alike', async () => {
    const provider = new JsonProvider();
    // A real checkpoint elsewhere, made to look like the location's "main" branch through a link.
    const foreign = await provider.write(outside, buildCheckpointWrite({ metadata: { branch: 'main' } }));
    const link = join(location, 'main');
    symlinkSync(join(outside, 'main'), link, 'dir');
    const file = join(link, basename(foreign.reference));
    const refused = linkRefused(link);

    expect(() => provider.parseReference(file)).toThrow(expect.objectContaining(refused));
    expect(() => provider.parseReference(file)).toThrow(
      /copy the files it leads to into the location, or point the location at the real directory/,
    );
    expect(() => provider.parseReference(link)).toThrow(expect.objectContaining(refused));
    expect(() => provider.parseReference(`${link}#${foreign.id}`)).toThrow(expect.objectContaining(refused));
    await expect(
      loadCheckpoint(file, createProviderRegistry([providerEntryOf(provider)])),
    ).rejects.toMatchObject(refused);
    await expect(provider.read(location, foreign.id)).rejects.toMatchObject(refused);
    await expect(provider.list(location)).rejects.toMatchObject(refused);
    await expect(provider.list(location, { branch: 'main' })).rejects.toMatchObject(refused);
    await expect(provider.latest(location)).rejects.toMatchObject(refused);
    await expect(provider.write(location, buildCheckpointWrite())).rejects.toMatchObject(refused);
    expect(() => provider.writeSync(location, buildCheckpointWrite())).toThrow(
      expect.objectContaining(refused),
    );
    expect(readdirSync(join(outside, 'main'))).toEqual([basename(foreign.reference)]);
  });

  it('refuses a branch directory that became a link after its checkpoints were written', async () => {
    const provider = new JsonProvider();
    const own = await provider.write(location, buildCheckpointWrite({ metadata: { branch: 'fork/a' } }));
    renameSync(join(location, 'fork', 'a'), join(outside, 'a'));
    symlinkSync(join(outside, 'a'), join(location, 'fork', 'a'), 'dir');
    const refused = linkRefused(join(location, 'fork', 'a'));
    await expect(provider.read(location, own.id)).rejects.toMatchObject(refused);
    await expect(new JsonProvider().read(location, own.id)).rejects.toMatchObject(refused);
    expect(() => provider.parseReference(join(location, 'fork', 'a', basename(own.reference)))).toThrow(
      expect.objectContaining(refused),
    );
    await expect(provider.delete(location, own.id)).rejects.toMatchObject(refused);
  });

  it('refuses a checkpoint file that is a link', async () => {
    const provider = new JsonProvider();
    const foreign = await provider.write(outside, buildCheckpointWrite());
    mkdirSync(join(location, 'main'));
    const fileLink = join(location, 'main', basename(foreign.reference));
    symlinkSync(foreign.reference, fileLink);
    await expect(provider.read(location, foreign.id)).rejects.toMatchObject(linkRefused(fileLink));
    await expect(provider.list(location)).rejects.toMatchObject(linkRefused(fileLink));
  });

  it('accepts a location that is itself a link: links are refused only inside it', async () => {
    const provider = new JsonProvider();
    const linkedLocation = join(sandbox, 'linked-location');
    symlinkSync(location, linkedLocation, 'dir');
    const stored = await provider.write(
      linkedLocation,
      buildCheckpointWrite({ metadata: { branch: 'fork/x' } }),
    );
    expect(stored.reference).toBe(join(linkedLocation, 'fork', 'x', basename(stored.reference)));
    expect(provider.parseReference(stored.reference)).toMatchObject({
      location: linkedLocation,
      id: stored.id,
    });
    expect(provider.parseReference(join(location, 'fork', 'x'))).toEqual({ location, id: stored.id });
    for (const spelling of [linkedLocation, location]) {
      expect((await provider.list(spelling)).map((entry) => entry.id)).toEqual([stored.id]);
      expect((await new JsonProvider().read(spelling, stored.id)).constructor).toBe(Object);
    }
    expect(
      (await loadCheckpoint(stored.reference, createProviderRegistry([providerEntryOf(provider)]))).location,
    ).toBe(linkedLocation);
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
