import { randomBytes } from 'node:crypto';
import { registerSecretValue } from '@crewline/events';
import { createProviderRegistry } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCommand, temporaryDirectory } from './test-support/run-command.js';

let directory: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  directory = await temporaryDirectory();
});
afterEach(async () => {
  await directory.remove();
});

describe('the error boundary', () => {
  it('reports an unexpected error without the credentials it quotes', async () => {
    const secret = `db${randomBytes(12).toString('hex')}`;
    registerSecretValue(secret);
    const result = await runCommand(['checkpoint', 'list', directory.path], {
      cwd: directory.path,
      providers: createProviderRegistry([
        {
          name: 'json',
          claims: () => true,
          create: async () => {
            throw new Error(`could not connect with password ${secret}`);
          },
        },
      ]),
    });
    expect(result.code).toBe(70);
    expect(result.stderr).toContain('could not connect with password [REDACTED]');
    expect(result.stderr).not.toContain(secret);
  });
});
