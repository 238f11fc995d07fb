import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { sourceCommand } from '../test-support/subprocess.js';
import { hasTmux } from '../test-support/tmux-session.js';

// Review r-wave3a findings 1 and 3: the browser turns on bracketed paste with the alternate screen,
// and must turn both off on every way out, a SIGTERM or SIGHUP included. A shell that does not do it
// itself (dash, as `sh` here) then shows a paste with the marks around it: `cat -v` prints ^[[200~.

function tmux(...args: string[]): string {
  return execFileSync('tmux', args, { encoding: 'utf8' });
}

const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

let panes = 0;

/** A shell (`sh`) in a detached tmux session of 80×24: the browser runs in it, and what follows. */
class ShellPane {
  readonly name = `crewline-modes-${process.pid}-${++panes}`;

  constructor(cwd: string) {
    const environment = Object.entries({ NO_COLOR: '1', CI: 'true', npm_config_user_agent: '' });
    tmux(
      'new-session',
      '-d',
      '-s',
      this.name,
      '-x',
      '80',
      '-y',
      '24',
      '-c',
      cwd,
      ...environment.flatMap(([key, value]) => ['-e', `${key}=${value}`]),
      'sh',
    );
  }

  /** Runs the browser, says its exit status, then echoes what is typed or pasted (`cat -v`). */
  startBrowser(): void {
    const command = [process.execPath, ...sourceCommand(['checkpoint'])]
      .map((part) => `'${part.replaceAll("'", "'\\''")}'`)
      .join(' ');
    tmux('send-keys', '-t', this.name, '-l', `${command}; echo EXIT=$?; cat -v`);
    tmux('send-keys', '-t', this.name, 'Enter');
  }

  /** The browser's process: the shell's child. */
  browserPid(): number {
    const shell = tmux('display-message', '-p', '-t', this.name, '#{pane_pid}').trim();
    const children = spawnSync('ps', ['-o', 'pid=', '--ppid', shell], { encoding: 'utf8' }).stdout.trim();
    return Number(children.split('\n')[0]);
  }

  screen(): string {
    return tmux('capture-pane', '-p', '-t', this.name);
  }

  alternateScreenOn(): boolean {
    return tmux('display-message', '-p', '-t', this.name, '#{alternate_on}').trim() === '1';
  }

  async send(...keys: string[]): Promise<void> {
    for (const key of keys) {
      tmux('send-keys', '-t', this.name, key);
      await pause(200);
    }
  }

  /** Pastes `text` as a terminal does when the program asked for bracketed paste (`-p`). */
  paste(text: string): void {
    execFileSync('tmux', ['load-buffer', '-b', this.name, '-'], { input: text });
    tmux('paste-buffer', '-p', '-d', '-b', this.name, '-t', this.name);
  }

  async waitForScreen(probe: (text: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = this.screen();
      if (probe(last)) return last;
      await pause(150);
    }
    throw new Error(`timed out waiting for ${what}; screen:\n${last}`);
  }

  kill(): void {
    if (spawnSync('tmux', ['has-session', '-t', this.name]).status === 0)
      tmux('kill-session', '-t', this.name);
  }
}

/** After the browser ended with `status`: the user's screen is back, and a paste shows no marks. */
async function expectTerminalGivenBack(pane: ShellPane, status: number): Promise<void> {
  await pane.waitForScreen((current) => current.includes(`EXIT=${status}`), `EXIT=${status}`);
  pane.paste('PASTED AFTER');
  const text = await pane.waitForScreen((current) => current.includes('PASTED AFTER'), 'the paste');
  expect(text).not.toContain('^[[200~');
  expect(text).not.toContain('^[[201~');
  expect(pane.alternateScreenOn()).toBe(false);
}

// A project whose crewline.config.ts registers a slow model, under this package's node_modules so
// that the config resolves @crewline/runtime like a user's project does.
const slowConfig = `import { defineConfig } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';

export default defineConfig({ models: { 'slow:writer': () => offlineModel({ name: 'slow', latencyMs: 1500 }) } });
`;

let pane: ShellPane | undefined;
afterEach(() => {
  pane?.kill();
  pane = undefined;
});

describe.skipIf(!hasTmux)('bracketed paste and the alternate screen off on the way out (tmux, sh)', () => {
  const project = join(
    new URL('../../node_modules/.crewline-test/', import.meta.url).pathname,
    `terminal-modes-${process.pid}`,
  );
  const location = join(project, '.checkpoints');

  beforeAll(async () => {
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'crewline.config.ts'), slowConfig);
    registerProject({ models: { 'slow:writer': () => offlineModel({ name: 'slow' }) } });
    const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Plain', llm: 'slow:writer' });
    const crew = new Crew({
      name: 'Slow crew',
      agents: [writer],
      tasks: [1, 2, 3, 4].map(
        (step) => new Task({ description: `Step ${step}`, expectedOutput: 'A line', agent: writer }),
      ),
      checkpoint: {
        location,
        provider: await providerOf('json'),
        onEvents: ['task_completed', 'SIGTERM', 'SIGHUP'],
      },
    });
    await crew.kickoff({});
  });

  afterAll(() => rm(project, { recursive: true, force: true }));

  async function openBrowser(): Promise<ShellPane> {
    const shell = new ShellPane(project);
    pane = shell;
    // The prompt (`$ `, or `# ` as root).
    await shell.waitForScreen((current) => current.trim() !== '', 'the shell');
    shell.startBrowser();
    await shell.waitForScreen((current) => current.includes('crew Slow crew (4)'), 'the tree');
    expect(shell.alternateScreenOn()).toBe(true);
    return shell;
  }

  it('after q', async () => {
    const shell = await openBrowser();
    await shell.send('q');
    await expectTerminalGivenBack(shell, 0);
  }, 60_000);

  it('after SIGTERM (143)', async () => {
    const shell = await openBrowser();
    process.kill(shell.browserPid(), 'SIGTERM');
    await expectTerminalGivenBack(shell, 143);
  }, 60_000);

  it('after SIGHUP (129)', async () => {
    const shell = await openBrowser();
    process.kill(shell.browserPid(), 'SIGHUP');
    await expectTerminalGivenBack(shell, 129);
  }, 60_000);

  // The runtime listens to SIGTERM during a run: it writes the run's checkpoint on it, waits for the
  // write, and raises the signal again. The browser's restore runs after that, not instead of it: a
  // listener of the browser's own that raised the signal again (the review's first suggestion) made
  // the runtime deliver it to the run twice, two SIGTERM checkpoints.
  it('after SIGTERM during a fork run: the runtime still writes its SIGTERM checkpoint', async () => {
    const shell = await openBrowser();
    // The first checkpoint (1/4 done): forking it runs three slow tasks.
    await shell.send('g', 'j', 'j');
    await shell.waitForScreen(
      (current) => current.split('\n').some((line) => line.startsWith('>') && line.includes('1/4')),
      'the first checkpoint',
    );
    await shell.send('f', 'Enter');
    await shell.waitForScreen((current) => current.includes('task 2 Step 2 started'), 'the run to start');
    process.kill(shell.browserPid(), 'SIGTERM');
    await expectTerminalGivenBack(shell, 143);
    const provider = await providerOf('json');
    const fork = (await provider.list(provider.resolveLocation(location))).filter(
      (checkpoint) => checkpoint.branch !== 'main',
    );
    // One: the signal reached the run once (not again when raised a second time).
    const triggers = fork.map((checkpoint) => checkpoint.trigger);
    expect(
      triggers.filter((trigger) => trigger === 'SIGTERM'),
      JSON.stringify(triggers),
    ).toHaveLength(1);
    expect(fork.every((checkpoint) => (checkpoint.entities[0]?.completed ?? 0) < 4)).toBe(true);
  }, 90_000);
});
