import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sourceCommand } from './subprocess.js';

/** True when tmux can be run (CI installs it; locally: apt-get install -y tmux). */
export const hasTmux = spawnSync('tmux', ['-V']).status === 0;

function tmux(...args: string[]): string {
  return execFileSync('tmux', args, { encoding: 'utf8' });
}

const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

let sessions = 0;

/**
 * `crewline` (from source) running in a detached tmux session: a real pseudo-terminal of the given
 * size. Keys go in one at a time, 200 ms apart (keys sent together reach the program as one input);
 * the screen is read back with capture-pane; the exit status is written to a file by the shell.
 */
export class TmuxSession {
  readonly name = `crewline-tui-${process.pid}-${++sessions}`;
  readonly #statusFile: string;

  constructor(
    args: readonly string[],
    options: {
      cwd: string;
      width?: number;
      height?: number;
      env?: Record<string, string>;
      /** A file the program's stderr goes to instead of the screen (read it once the program ended). */
      stderrFile?: string;
    },
  ) {
    this.#statusFile = join(options.cwd, `.exit-status-${this.name}`);
    const command = [process.execPath, ...sourceCommand(args)]
      .map((part) => `'${part.replaceAll("'", "'\\''")}'`)
      .join(' ');
    // CI=true as on CI machines, where terminal libraries may switch to non-interactive drawing. No
    // package manager's agent: hints say `crewline`, as a CLI on the PATH does (commandName).
    const environment = Object.entries({ CI: 'true', npm_config_user_agent: '', ...options.env }).flatMap(
      ([key, value]) => ['-e', `${key}=${value}`],
    );
    tmux(
      'new-session',
      '-d',
      '-s',
      this.name,
      '-x',
      String(options.width ?? 80),
      '-y',
      String(options.height ?? 24),
      '-c',
      options.cwd,
      ...environment,
      `${command}${options.stderrFile === undefined ? '' : ` 2>'${options.stderrFile.replaceAll("'", "'\\''")}'`}; echo $? > '${this.#statusFile}'`,
    );
  }

  alive(): boolean {
    return spawnSync('tmux', ['has-session', '-t', this.name]).status === 0;
  }

  screen(): string {
    return tmux('capture-pane', '-p', '-t', this.name);
  }

  /** Sends tmux key names (`Enter`, `Tab`, `C-u`, `k`…) one at a time. */
  async send(...keys: string[]): Promise<void> {
    for (const key of keys) {
      tmux('send-keys', '-t', this.name, key);
      await pause(200);
    }
  }

  /** Types text one literal character at a time. */
  async type(text: string): Promise<void> {
    for (const character of text) {
      tmux('send-keys', '-t', this.name, '-l', character);
      await pause(200);
    }
  }

  /**
   * Writes `text` to the terminal in one write: the program reads it at once, as keys a fast typist,
   * a script or a slow link deliver together, or a part of a paste the terminal has not marked.
   */
  typeInOneRead(text: string): void {
    tmux('send-keys', '-t', this.name, '-l', text);
  }

  async waitForScreen(probe: (text: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      if (!this.alive())
        throw new Error(`the browser exited while waiting for ${what}; last screen:\n${last}`);
      last = this.screen();
      if (probe(last)) return last;
      await pause(150);
    }
    throw new Error(`timed out waiting for ${what}; screen:\n${last}`);
  }

  /** The program's exit status once it has ended. */
  async exitStatus(timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (existsSync(this.#statusFile)) {
        const status = readFileSync(this.#statusFile, 'utf8').trim();
        if (status !== '') return status;
      }
      await pause(100);
    }
    throw new Error(`the browser did not end; screen:\n${this.alive() ? this.screen() : '(session ended)'}`);
  }

  kill(): void {
    if (this.alive()) tmux('kill-session', '-t', this.name);
  }
}
