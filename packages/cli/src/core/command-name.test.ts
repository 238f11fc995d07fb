// Found by a new-user trial (s8, finding 3): hints said `crewline checkpoint …`, which is not on the
// PATH where the CLI runs through a package manager (`pnpm crewline`, `npx crewline`).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandName } from './command-name.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-command-name-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
/** A project with crewline installed, and a folder inside it. */
const project = join(root, 'project');
mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
writeFileSync(join(project, 'node_modules', '.bin', 'crewline'), '');
const inside = join(project, 'src', 'flows');
mkdirSync(inside, { recursive: true });
/** A folder with no crewline installed (`npx @crewline/cli …` run there). */
const bare = join(root, 'bare');
mkdirSync(bare);

const pnpm = 'pnpm/10.34.9 npm/? node/v20.20.2 linux x64';
const npm = 'npm/10.8.2 node/v20.20.2 linux x64 workspaces/false';

describe('commandName', () => {
  it('names the CLI as the package manager that ran it runs it, in a project that has it', () => {
    expect(commandName({ npm_config_user_agent: pnpm, npm_lifecycle_event: 'crewline' }, bare)).toBe(
      'pnpm crewline',
    );
    expect(commandName({ npm_config_user_agent: pnpm, npm_command: 'exec' }, inside)).toBe('pnpm crewline');
    expect(commandName({ npm_config_user_agent: npm, npm_command: 'exec' }, project)).toBe('npx crewline');
    expect(commandName({ npm_config_user_agent: npm, npm_lifecycle_event: 'crewline' }, bare)).toBe(
      'npm run crewline --',
    );
    expect(commandName({ npm_config_user_agent: 'yarn/4.5.0 npm/? node/v20.20.2' }, project)).toBe(
      'yarn crewline',
    );
  });

  // Review of f27c750: after `npx @crewline/cli …` where nothing is installed, the hint said
  // `npx crewline`, which fetches an unrelated package named crewline from the registry.
  it('never says npx crewline where no crewline is installed and no script is named so', () => {
    expect(commandName({ npm_config_user_agent: npm, npm_command: 'exec' }, bare)).toBe('npx @crewline/cli');
    expect(commandName({ npm_config_user_agent: npm, npm_command: 'run-script' }, bare)).toBe('crewline');
    expect(commandName({ npm_config_user_agent: pnpm, npm_command: 'exec' }, bare)).toBe('crewline');
  });

  // Review of 116c890: a Yarn Plug'n'Play project has no node_modules; its bins run as `yarn crewline`.
  it("says yarn crewline in a Yarn Plug'n'Play project", () => {
    const pnp = join(root, 'pnp');
    mkdirSync(join(pnp, 'app'), { recursive: true });
    writeFileSync(join(pnp, '.pnp.cjs'), '');
    const yarn = { npm_config_user_agent: 'yarn/4.5.0 npm/? node/v20.20.2' };
    // `yarn dlx @crewline/cli` in a Plug'n'Play project that does not depend on it (review of c1797ec).
    expect(commandName(yarn, join(pnp, 'app'))).toBe('crewline');
    writeFileSync(
      join(pnp, 'package.json'),
      JSON.stringify({ devDependencies: { '@crewline/cli': '^0.1.0' } }),
    );
    expect(commandName(yarn, join(pnp, 'app'))).toBe('yarn crewline');
  });

  it('says crewline alone when no package manager ran it', () => {
    expect(commandName({}, project)).toBe('crewline');
  });
});
