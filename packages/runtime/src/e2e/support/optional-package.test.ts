import { describe, expect, it } from 'vitest';
import { importIfInstalled } from './optional-package.js';

describe('importIfInstalled', () => {
  it('gives the module of an installed package', async () => {
    const module = await importIfInstalled<{ SqliteProvider?: unknown }>('@crewline/provider-sqlite');
    expect(typeof module?.SqliteProvider).toBe('function');
  });

  it('gives undefined only when the package itself is not installed', async () => {
    expect(await importIfInstalled('@crewline/no-such-package-for-tests')).toBeUndefined();
  });

  it('throws every other failure to load it, so tests fail instead of being skipped', async () => {
    const broken = Object.assign(new Error('Could not locate the bindings file for better_sqlite3.node'), {
      code: 'ERR_DLOPEN_FAILED',
    });
    await expect(importIfInstalled('@crewline/provider-sqlite', () => Promise.reject(broken))).rejects.toBe(
      broken,
    );
    // A dependency of the package is missing: the install is broken, not the package absent.
    const dependency = Object.assign(
      new Error("Cannot find package 'better-sqlite3' imported from /x/provider-sqlite/dist/connection.js"),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    await expect(
      importIfInstalled('@crewline/provider-sqlite', () => Promise.reject(dependency)),
    ).rejects.toBe(dependency);
  });
});
