import * as fs from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJiti } from 'jiti';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { standardDecoratorsTransform } from './standard-decorators.js';

// The cache's writes, watched: what a concurrent command may read is only ever made by a rename.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, writeFileSync: vi.fn(actual.writeFileSync), renameSync: vi.fn(actual.renameSync) };
});

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'crewline-compiled-entry-'));
});
afterAll(() => rm(directory, { recursive: true, force: true }));

describe('a compiled file stored in the cache', () => {
  it('is written whole under a temporary name and renamed to its entry: a command reading at the same time sees all or none', async () => {
    const plain = createJiti(import.meta.url, { interopDefault: false, fsCache: false });
    const transform = standardDecoratorsTransform(plain, directory);
    const options = {
      source: 'export const answer: number = 42;\n',
      filename: join(directory, 'config.ts'),
      ts: true,
    };
    const { code } = transform(options);
    const entries = (await readdir(directory)).filter((name) => name.endsWith('.js'));
    expect(entries).toHaveLength(1);
    const entry = join(directory, entries[0]!);
    const written = vi.mocked(fs.writeFileSync).mock.calls.map(([path]) => String(path));
    expect(written.filter((path) => path.startsWith(directory))).toEqual([expect.stringMatching(/\.tmp$/)]);
    expect(vi.mocked(fs.renameSync)).toHaveBeenCalledWith(written.at(-1), entry);
    // And the next command is served that entry, as compiled.
    expect(transform(options).code).toBe(code);
    expect(vi.mocked(fs.writeFileSync)).toHaveBeenCalledTimes(written.length);
  });
});
