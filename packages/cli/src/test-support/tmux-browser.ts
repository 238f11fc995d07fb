import { afterAll, afterEach, beforeAll } from 'vitest';
import type { FixtureKind } from './fixtures.js';
import { type CrewRun, writeCrewRun } from './real-crew.js';
import { temporaryDirectory } from './run-command.js';
import { TmuxSession } from './tmux-session.js';

type SessionOptions = ConstructorParameters<typeof TmuxSession>[1];

/**
 * Registers, in the enclosing describe, an afterEach that kills the tmux sessions its tests opened
 * (a test that fails half-way leaves no browser running). Returns what opens them.
 */
export function useTmuxSessions(): (args: readonly string[], options: SessionOptions) => TmuxSession {
  const opened: TmuxSession[] = [];
  afterEach(() => {
    for (const session of opened.splice(0)) session.kill();
  });
  return (args, options) => {
    const session = new TmuxSession(args, options);
    opened.push(session);
    return session;
  };
}

export interface BrowserProject {
  /** The project's directory (once beforeAll has run). */
  readonly path: string;
  /** The crew run written in it: 3 tasks, a checkpoint on each task_completed. */
  readonly run: CrewRun;
  /**
   * `crewline checkpoint` (or `args`) in the project, without colours, in an 80×24 terminal unless
   * told; killed after the test.
   */
  open(options?: { args?: readonly string[]; width?: number; height?: number }): TmuxSession;
}

/**
 * A temporary project with a real crew run written into it (writeCrewRun) for the tests of the
 * enclosing describe: made in beforeAll, removed in afterAll; the browsers opened are killed after
 * each test.
 */
export function useBrowserProject(kind: FixtureKind): BrowserProject {
  let project: { path: string; remove: () => Promise<void> } | undefined;
  let run: CrewRun | undefined;
  const openSession = useTmuxSessions();
  beforeAll(async () => {
    project = await temporaryDirectory();
    run = await writeCrewRun(kind, project.path);
  });
  afterAll(async () => {
    await run?.close();
    await project?.remove();
  });
  const made = () => {
    if (project === undefined || run === undefined)
      throw new Error('useBrowserProject: the project is made in beforeAll; read it inside a test');
    return { project, run };
  };
  return {
    get path() {
      return made().project.path;
    },
    get run() {
      return made().run;
    },
    open({ args = ['checkpoint'], width, height } = {}) {
      return openSession(args, {
        cwd: made().project.path,
        width,
        height,
        env: { NO_COLOR: '1' },
      });
    },
  };
}

/**
 * From the tree just opened: the Tasks tab (Tab, 2), the editor of task 1's output (Enter), emptied
 * (Ctrl+U). Waits for each screen on the way, so the editor is open and empty when it returns.
 */
export async function editFirstTaskOutput(browser: TmuxSession): Promise<void> {
  await browser.waitForScreen((current) => current.includes('[Overview]'), 'the tree');
  await browser.send('Tab', '2');
  await browser.waitForScreen((current) => current.includes('[x] 1. research'), 'the tasks tab');
  await browser.send('Enter');
  await browser.waitForScreen((current) => current.includes('Edit output of task 1'), 'the editor');
  await browser.send('C-u');
}
