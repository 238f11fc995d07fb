import { logger, setLogSink } from '@crewline/events';
import { captureLogs } from '@crewline/runtime/testing';
import { expect, it } from 'vitest';
import { RunWarnings } from './run-warnings.js';

it('gives each run the warnings logged in its own work, and passes every record on to the sink before it', async () => {
  const logs = captureLogs();
  try {
    const warnings = new RunWarnings();
    const first: string[] = [];
    const second: string[] = [];
    await Promise.all([
      warnings.capture(
        (line) => first.push(line),
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 10));
          logger.warn('runtime', 'first run warns');
        },
      ),
      warnings.capture(
        (line) => second.push(line),
        async () => {
          logger.info('runtime', 'not a warning');
          logger.warn('runtime', 'second run warns');
        },
      ),
    ]);
    logger.warn('runtime', 'outside any run');
    expect(first).toEqual(['warn [runtime] first run warns']);
    expect(second).toEqual(['warn [runtime] second run warns']);
    expect(logs.records.filter((record) => record.level === 'warn').map((record) => record.message)).toEqual([
      'second run warns',
      'first run warns',
      'outside any run',
    ]);
  } finally {
    logs.stop({ allowUnexpected: true });
  }
});

it('keeps passing records on when a sink that took it as its previous one puts it back after the runs', async () => {
  const before = setLogSink(null);
  const seen: string[] = [];
  setLogSink((record) => void seen.push(record.message));
  try {
    const warnings = new RunWarnings();
    let later: ReturnType<typeof setLogSink> = null;
    await warnings.capture(
      () => undefined,
      async () => {
        // Installed during the run (as a test's captureLogs would be), and put back after it.
        later = setLogSink((record) => void seen.push(`later: ${record.message}`));
      },
    );
    setLogSink(later);
    logger.warn('runtime', 'after the runs');
    expect(seen).toEqual(['after the runs']);
  } finally {
    setLogSink(before);
  }
});

// Review of 7fa8876: the page's line said "saving state … failed" without why; the terminal's says it.
it("says the error's message after a warning's, as the terminal does", async () => {
  const logs = captureLogs();
  try {
    const lines: string[] = [];
    await new RunWarnings().capture(
      (line) => lines.push(line),
      async () =>
        logger.warn(
          'flow',
          'saving state s1 failed; the flow continues',
          new Error('EACCES: permission denied'),
        ),
    );
    expect(lines).toEqual([
      'warn [flow] saving state s1 failed; the flow continues: EACCES: permission denied',
    ]);
  } finally {
    logs.stop({ allowUnexpected: true });
  }
});
