// Found by a new-user trial (s8, finding 3): hints said `crewline checkpoint …`, which is not on the
// PATH where the CLI runs through a package manager (`pnpm crewline`, `npx crewline`).
import { describe, expect, it } from 'vitest';
import { commandName } from './command-name.js';

describe('commandName', () => {
  it('names the CLI as the package manager that ran it runs it', () => {
    const pnpm = 'pnpm/10.34.9 npm/? node/v20.20.2 linux x64';
    expect(commandName({ npm_config_user_agent: pnpm, npm_lifecycle_event: 'crewline' })).toBe(
      'pnpm crewline',
    );
    expect(commandName({ npm_config_user_agent: pnpm, npm_command: 'exec' })).toBe('pnpm crewline');
    const npm = 'npm/10.8.2 node/v20.20.2 linux x64 workspaces/false';
    expect(commandName({ npm_config_user_agent: npm, npm_command: 'exec' })).toBe('npx crewline');
    expect(commandName({ npm_config_user_agent: npm, npm_lifecycle_event: 'crewline' })).toBe(
      'npm run crewline --',
    );
    expect(commandName({ npm_config_user_agent: 'yarn/4.5.0 npm/? node/v20.20.2' })).toBe('yarn crewline');
  });

  it('says crewline alone when no package manager ran it', () => {
    expect(commandName({})).toBe('crewline');
  });
});
