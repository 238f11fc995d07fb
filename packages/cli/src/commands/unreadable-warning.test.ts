import { readFile, writeFile } from 'node:fs/promises';
import { type LogRecord, setLogSink } from '@crewline/events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// The warning about a damaged JSON checkpoint file is printed where it tells the user something the
// command does not show: not by list (its row says "(unreadable)"), nor by info of another checkpoint.
describe('the warning about a damaged checkpoint file', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;
  let warnings: string[] = [];
  let previousSink: ReturnType<typeof setLogSink>;
  const crewline = (...args: string[]) => runCommand(['checkpoint', ...args], { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-unreadable-warning-');
    fixture = await writeFixture('json', project.path);
  });
  afterAll(async () => {
    await fixture?.provider.close?.();
    await project?.remove();
  });
  beforeEach(() => {
    warnings = [];
    previousSink = setLogSink((record: LogRecord) => {
      if (record.level === 'warn') warnings.push(`[${record.component}] ${record.message}`);
    });
  });
  afterEach(() => {
    setLogSink(previousSink);
  });

  /** Runs `body` with the file of `target` cut short, then puts it back. */
  async function withDamaged(target: { reference: string }, body: () => Promise<void>): Promise<void> {
    const text = await readFile(target.reference, 'utf8');
    await writeFile(target.reference, text.slice(0, 100));
    try {
      await body();
    } finally {
      await writeFile(target.reference, text);
    }
  }

  it('list, list --json and info of a healthy checkpoint print none', async () => {
    await withDamaged(fixture.main[1]!, async () => {
      const listed = await crewline('list');
      expect(listed.stdout).toContain('(unreadable)');
      expect((await crewline('list', '--json')).code).toBe(0);
      const info = await crewline('info', fixture.main[0]!.id);
      expect(info.code).toBe(0);
      expect(info.stderr).toBe('');
      expect(warnings).toEqual([]);
    });
  });

  it('info of the latest prints it once when the newest file is skipped', async () => {
    const newest = fixture.fork;
    await withDamaged(newest, async () => {
      const info = await crewline('info');
      expect(info.code).toBe(0);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(newest.reference);
    });
  });
});
