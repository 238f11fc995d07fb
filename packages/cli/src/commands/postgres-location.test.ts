import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresProvider } from '@crewline/provider-postgres';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
} from '@crewline/provider-postgres/test-support';
import { Agent, Crew, Task } from '@crewline/runtime';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BrowserDriver } from '../test-support/drive-browser.js';
import { type ProcessResult, runCrewlineProcess } from '../test-support/subprocess.js';
import { initialState } from '../tui/state/browser-state.js';
import { renderScreen, screenText } from '../tui/state/screen.js';

describeWithPostgres('crewline checkpoint on a Postgres location (connection string with a password)', () => {
  let url: string;
  let password: string;
  let project: string;
  const provider = new PostgresProvider({ poolSize: 2 });
  let location: string;
  let checkpoints: StoredCheckpoint[];
  const results: ProcessResult[] = [];

  /** `crewline checkpoint <args>` in a real process; every output is kept for the password check. */
  async function crewline(...args: string[]): Promise<ProcessResult> {
    const result = await runCrewlineProcess(['checkpoint', ...args], { cwd: project });
    results.push(result);
    return result;
  }

  beforeAll(async () => {
    url = temporaryLocation();
    password = decodeURIComponent(new URL(url).password);
    project = mkdtempSync(join(tmpdir(), 'crewline-cli-postgres-'));
    const researcher = new Agent({
      role: 'Researcher',
      goal: 'Research {topic}',
      backstory: 'Careful',
      llm: 'offline:cli-test',
    });
    const writer = new Agent({
      role: 'Writer',
      goal: 'Write about {topic}',
      backstory: 'Clear',
      llm: 'offline:cli-test',
    });
    const crew = new Crew({
      name: 'Harbour crew',
      agents: [researcher, writer],
      tasks: [
        new Task({
          name: 'research',
          description: 'Research {topic}',
          expectedOutput: 'Bullets',
          agent: researcher,
        }),
        new Task({
          name: 'outline',
          description: 'Outline {topic}',
          expectedOutput: 'An outline',
          agent: writer,
        }),
        new Task({
          name: 'write',
          description: 'Write the article',
          expectedOutput: 'A paragraph',
          agent: writer,
        }),
      ],
      checkpoint: { location: url, provider, onEvents: ['task_completed'] },
    });
    await crew.kickoff({ inputs: { topic: 'harbour seals' } });
    location = provider.resolveLocation(url);
    checkpoints = await provider.list(location);
  });

  afterAll(async () => {
    // No command printed the password, whatever it did.
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) {
      expect(result.stdout).not.toContain(password);
      expect(result.stderr).not.toContain(password);
    }
    await provider.close();
    await dropLocation(url);
    rmSync(project, { recursive: true, force: true });
  });

  it('the test run wrote one checkpoint per task, and its location carries no password', () => {
    expect(checkpoints).toHaveLength(3);
    expect(location).not.toContain(password);
    expect(url).toContain(password);
  });

  it('the browser state machine loads the location: tree, detail, and a resume of the selected checkpoint', async () => {
    const driver = new BrowserDriver(
      initialState({ location, providerKind: 'postgres' }),
      provider,
      location,
    );
    await driver.dispatch({ type: 'list-loaded', checkpoints: await driver.list() });
    expect(driver.state.selectedKey).toBe(checkpoints.at(-1)!.id);
    expect(driver.state.detail?.status).toBe('ready');
    const screen = screenText(renderScreen(driver.state, { width: 100, height: 30 }));
    expect(screen).toContain('Harbour crew');
    expect(screen).toContain('3/3');
    expect(screen).not.toContain(password);
    await driver.press('e', 'y');
    const run = driver.effects.find((effect) => effect.type === 'start-run');
    expect(run).toMatchObject({
      type: 'start-run',
      request: {
        mode: 'resume',
        checkpointId: checkpoints.at(-1)!.id,
        reference: checkpoints.at(-1)!.reference,
      },
    });
    expect(JSON.stringify(run)).not.toContain(password);
  });

  it('list, info and diff read it', async () => {
    const list = await crewline('list', url);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    for (const checkpoint of checkpoints) expect(list.stdout).toContain(checkpoint.id);
    expect(list.stdout).toContain('crew Harbour crew');

    const info = await crewline('info', `${url}#${checkpoints[1]!.id}`);
    expect(info.stderr).toBe('');
    expect(info.code).toBe(0);
    expect(info.stdout).toContain(checkpoints[1]!.id);
    expect(info.stdout).toContain('Outline harbour seals');

    // A misspelt schema is not an empty store: "does not exist", exit 3, as a missing directory.
    const misspelt = url.replace(/schema=([^&]+)/, 'schema=$1_typo');
    const missing = await crewline('list', misspelt);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/schema "[^"]+_typo" does not exist/);

    // A misspelt database is refused the same way: exit 3, not 1 (a failure of the command).
    const parsed = new URL(url);
    parsed.pathname = `${parsed.pathname}_typo`;
    const noDatabase = await crewline('list', parsed.toString());
    expect(noDatabase.code).toBe(3);
    expect(noDatabase.stdout).toBe('');
    expect(noDatabase.stderr).toMatch(/database of .* does not exist/);
    expect(noDatabase.stderr).not.toContain(password);
    expect((await crewline('info', `${parsed.toString()}#${checkpoints[1]!.id}`)).code).toBe(3);

    const diff = await crewline('diff', checkpoints[0]!.id, checkpoints[2]!.id, '--location', url);
    expect(diff.stderr).toBe('');
    expect(diff.code).toBe(0);
    expect(diff.stdout).toMatch(/outline|write/i);
  }, 120_000);

  it('resume and fork run the crew from a checkpoint and write to the same location', async () => {
    // The first checkpoint is no longer the newest of its run: the resume goes to a new branch.
    const resume = await crewline('resume', checkpoints[0]!.id, '--location', url);
    expect(resume.code).toBe(0);
    expect(resume.stderr).toMatch(/not the latest of its run .* new branch/);
    expect(resume.stdout).toContain('task 2 outline started');
    expect(resume.stdout).toMatch(/Finished crew Harbour crew on branch fork\//);

    const fork = await crewline('fork', `${url}#${checkpoints[1]!.id}`, '--branch', 'experiment');
    expect(fork.stderr).toBe('');
    expect(fork.code).toBe(0);
    expect(fork.stdout).toContain('Finished crew Harbour crew on branch experiment');
    const branches = new Set((await provider.list(location)).map((checkpoint) => checkpoint.branch));
    expect(branches).toContain('experiment');
    expect(branches.size).toBe(3);
  }, 120_000);

  it('a run someone holds is refused naming the holder; --on-conflict fork continues on a new branch', async () => {
    const head = checkpoints.at(-1)!;
    const lease = await provider.claimLease(location, {
      lineageId: head.lineageId,
      owner: 'cli-test-holder',
      checkpointId: head.id,
      holder: 'a worker of the CLI test',
      ttlMs: 60_000,
    });
    try {
      const refused = await crewline('resume', head.id, '--location', url);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(refused.stderr).toMatch(/^crewline: .*being continued by a worker of the CLI test/);

      const forked = await crewline('resume', head.id, '--location', url, '--on-conflict', 'fork');
      expect(forked.code).toBe(0);
      expect(forked.stdout).toMatch(/Finished crew Harbour crew on branch fork\//);
    } finally {
      await provider.releaseLease(location, lease);
    }
  }, 120_000);

  it('prune keeps what runs need (dry run first): fork points, the first checkpoint of each fork, heads', async () => {
    const before = await provider.list(location);
    // The resume above went to a branch of two checkpoints: its first names its fork point on main
    // (the one link from the fork to where it started, kept since 795297c) and its second is its head.
    const resumed = before.filter((checkpoint) => checkpoint.branch.startsWith('fork/'));
    expect(resumed.length).toBeGreaterThanOrEqual(2);
    const dryRun = await crewline('prune', url, '--keep', '1', '--dry-run');
    expect(dryRun.stderr).toBe('');
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain('Nothing to prune in postgres://');
    expect(dryRun.stdout).toContain('that forks start from (prune never removes one)');
    expect(dryRun.stdout).not.toContain('Would remove');

    const prune = await crewline('prune', '--location', url, '--keep', '1');
    expect(prune.stderr).toBe('');
    expect(prune.code).toBe(0);
    expect(prune.stdout).toContain('Nothing to prune in postgres://');
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual(
      before.map((checkpoint) => checkpoint.id),
    );
  }, 120_000);
});
