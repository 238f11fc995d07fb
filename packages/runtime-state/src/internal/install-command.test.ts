import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectPackageManager, installCommand } from './install-command.js';

let directory: { path: string };
beforeEach(() => {
  directory = { path: mkdtempSync(join(tmpdir(), 'crewline-package-manager-')) };
});
afterEach(() => rmSync(directory.path, { recursive: true, force: true }));

describe('installCommand', () => {
  it('follows the package manager running the process', () => {
    const cwd = directory.path;
    for (const [agent, command] of [
      ['pnpm/10.4.1 npm/? node/v20.19.0', 'pnpm add x'],
      ['npm/10.8.2 node/v20.19.0 linux x64', 'npm install x'],
      ['yarn/4.5.0 npm/? node/v20.19.0', 'yarn add x'],
      ['bun/1.2.0 npm/? node/v20.19.0', 'bun add x'],
    ])
      expect(installCommand('x', { env: { npm_config_user_agent: agent }, cwd })).toBe(command);
  });

  it('else the nearest lockfile above the project directory, else npm', () => {
    const project = join(directory.path, 'project', 'packages', 'app');
    mkdirSync(project, { recursive: true });
    expect(detectPackageManager({ env: {}, cwd: project })).toBe('npm');
    writeFileSync(join(directory.path, 'project', 'yarn.lock'), '');
    expect(installCommand('@ai-sdk/openai', { env: {}, cwd: project })).toBe('yarn add @ai-sdk/openai');
    writeFileSync(join(directory.path, 'project', 'packages', 'bun.lock'), '');
    expect(detectPackageManager({ env: {}, cwd: project })).toBe('bun');
    writeFileSync(join(project, 'pnpm-lock.yaml'), '');
    expect(detectPackageManager({ env: {}, cwd: project })).toBe('pnpm');
  });
});
