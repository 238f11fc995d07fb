import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CrewlineError } from '@crewline/events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { modelProviderPackages } from './built-in-providers.js';
import { resolveModel } from './resolve-model.js';

let directory: { path: string; cleanup: () => void };
beforeEach(() => {
  directory = temporaryDirectory('crewline-no-packages-');
});
afterEach(() => directory.cleanup());

/**
 * A real `require` from a project that has none of the provider packages installed. pnpm's shim that
 * starts vitest sets NODE_PATH to the workspace's hoisted packages, which a user's project does not
 * have: those global paths are left out while it resolves.
 */
function requireFromEmptyProject() {
  writeFileSync(join(directory.path, 'package.json'), '{"name":"empty","private":true}');
  const require = createRequire(join(directory.path, 'index.js'));
  const modules = Module as unknown as { _initPaths: () => void };
  return (packageName: string) => {
    const saved = process.env.NODE_PATH;
    delete process.env.NODE_PATH;
    modules._initPaths();
    try {
      return require(packageName);
    } finally {
      if (saved !== undefined) process.env.NODE_PATH = saved;
      modules._initPaths();
    }
  };
}

describe('built-in prefixes load their AI SDK package on first use', () => {
  it('a missing package is named before a missing key (found by a trial: the key was asked for first)', () => {
    let failure: unknown;
    try {
      resolveModel('openai:gpt-4o-mini', { env: {}, loadPackage: requireFromEmptyProject() });
    } catch (error) {
      failure = error;
    }
    expect(CrewlineError.hasCode(failure, 'provider_unavailable')).toBe(true);
  });

  it.each([
    ['openai:gpt-4o-mini', { OPENAI_API_KEY: 'sk-test-0000000000000000' }, '@ai-sdk/openai'],
    ['anthropic:claude-sonnet-4-5', { ANTHROPIC_API_KEY: 'sk-ant-test-000000000000' }, '@ai-sdk/anthropic'],
    ['ollama:llama3.1', {}, '@ai-sdk/openai-compatible'],
  ])(
    '%s without its package is provider_unavailable naming the command that adds it',
    (id, env, packageName) => {
      const previous = process.env.npm_config_user_agent;
      process.env.npm_config_user_agent = 'pnpm/10.4.1 npm/? node/v20.19.0 linux x64';
      try {
        let failure: unknown;
        try {
          resolveModel(id, { env, loadPackage: requireFromEmptyProject() });
        } catch (error) {
          failure = error;
        }
        expect(CrewlineError.hasCode(failure, 'provider_unavailable')).toBe(true);
        const message = (failure as Error).message;
        expect(message).toContain(`model "${id}" needs ${packageName}, which is not installed`);
        expect(message).toContain(`pnpm add ${packageName}`);
        expect(message).not.toContain('sk-');
      } finally {
        if (previous === undefined) delete process.env.npm_config_user_agent;
        else process.env.npm_config_user_agent = previous;
      }
    },
  );

  it('with the package installed, the same id builds the model', () => {
    const model = resolveModel('openai:gpt-4o-mini', { env: { OPENAI_API_KEY: 'sk-test-0000000000000000' } });
    expect(model.provider).toBe('openai.responses');
  });

  it('no published module of the runtime imports a provider package statically', () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const sources = (readdirSync(root, { recursive: true }) as string[]).filter(
      (file) =>
        /\.ts$/.test(file) && !/\.test\.ts$/.test(file) && !/(^|\/)(test-support|e2e|examples)\//.test(file),
    );
    const importing = sources.filter((file) =>
      Object.values(modelProviderPackages).some((packageName) =>
        new RegExp(`from '${packageName}'|import\\('${packageName}'\\)`).test(
          readFileSync(join(root, file), 'utf8'),
        ),
      ),
    );
    expect(importing).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(root, '..', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    for (const packageName of Object.values(modelProviderPackages)) {
      expect(manifest.dependencies[packageName]).toBeUndefined();
      expect(manifest.peerDependencies[packageName]).toBeDefined();
      expect(manifest.peerDependenciesMeta[packageName]?.optional).toBe(true);
    }
  });
});
