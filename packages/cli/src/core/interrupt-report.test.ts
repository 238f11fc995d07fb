import { afterEach, describe, expect, it } from 'vitest';
import { reportInterrupt } from './interrupt-report.js';
import { longestRepeatedEdits, startOverCommand } from './start-over-command.js';

// A listener of our own keeps the emitted SIGINT from ending the test process: signal-exit and the
// report end it only when they are the signal's last listeners.
const keepAlive = () => undefined;
afterEach(() => {
  process.off('SIGINT', keepAlive);
});

/** What the report says when the run is interrupted before its first checkpoint. */
function saidOnInterrupt(options: Omit<Parameters<typeof reportInterrupt>[0], 'stderr'>): string {
  process.on('SIGINT', keepAlive);
  let said = '';
  const report = reportInterrupt({ ...options, stderr: { write: (text: string) => (said += text) } });
  process.emit('SIGINT', 'SIGINT');
  report.stop();
  return said;
}

describe('reportInterrupt before the first checkpoint of a browser run', () => {
  it('repeats the edits, the branch and the answer the run was started with', () => {
    const said = saidOnInterrupt({
      mode: 'fork',
      from: '20261127T201500123-72709cf7',
      cwd: '/project',
      startOver: {
        location: '/project/cp',
        flags: {
          branch: 'try-it',
          outputs: ["1=MY EDITED RESEARCH, it's mine"],
          inputs: ['topic=green tea', 'count:=3'],
        },
      },
    });
    expect(said).toBe(
      "crewline: interrupted before this fork wrote a checkpoint; start over with: crewline checkpoint fork 72709cf7 --location ./cp --branch try-it --set-output '1=MY EDITED RESEARCH, it'\\''s mine' --input 'topic=green tea' --input count:=3\n",
    );
  });

  it('says plainly that edits too long for one command line are not saved', () => {
    const said = saidOnInterrupt({
      mode: 'resume',
      from: '20261127T201500123-72709cf7',
      cwd: '/project',
      startOver: { location: '/project/cp', flags: { outputs: [`2=${'x'.repeat(longestRepeatedEdits)}`] } },
    });
    expect(said).toBe(
      'crewline: interrupted before this resume wrote a checkpoint; start over with: crewline checkpoint resume 72709cf7 --location ./cp; the edits it ran with (--set-output) are not saved anywhere and too long to repeat here: give them again\n',
    );
  });

  it('names the CLI as it was run (pnpm crewline), in the command that starts over', () => {
    const said = saidOnInterrupt({
      mode: 'fork',
      from: '20261127T201500123-72709cf7',
      cwd: '/project',
      command: 'pnpm crewline',
      startOver: { location: '/project/cp' },
    });
    expect(said).toContain('start over with: pnpm crewline checkpoint fork 72709cf7 --location ./cp\n');
  });

  it('keeps "run the same command again" for a command line, which holds its own flags', () => {
    const said = saidOnInterrupt({ mode: 'fork', from: '20261127T201500123-72709cf7', cwd: '/project' });
    expect(said).toBe(
      'crewline: interrupted before this fork wrote a checkpoint; run the same command again to start over from 72709cf7\n',
    );
  });
});

describe('startOverCommand', () => {
  it('repeats an answer and a multi-line output quoted for the shell', () => {
    expect(
      startOverCommand({
        command: 'crewline',
        mode: 'resume',
        from: 'abc',
        location: 'my cp',
        flags: { outputs: ['1=line one\nline two'], answer: 'yes' },
      }),
    ).toBe(
      "crewline checkpoint resume abc --location 'my cp' --set-output '1=line one\nline two' --answer yes",
    );
  });

  it('does not repeat an edit holding a control character a terminal would act on', () => {
    expect(
      startOverCommand({
        command: 'crewline',
        mode: 'fork',
        from: 'abc',
        location: 'cp',
        flags: { branch: 'b', inputs: ['topic=\u001b[2J'] },
      }),
    ).toBe(
      'crewline checkpoint fork abc --location cp --branch b; the edits it ran with (--input) are not saved anywhere and hold characters a command line does not show (a tab, a carriage return) to repeat here: give them again',
    );
  });

  // Review of fd18ebe: an answer starting with a dash was repeated as `--answer '-1'`, which the
  // command line refuses ("argument is ambiguous"); a Windows line ending was called "too long".
  it('gives a value starting with a dash as --flag=value', () => {
    expect(
      startOverCommand({
        command: 'crewline',
        mode: 'resume',
        from: 'abc',
        location: 'cp',
        flags: { answer: '- no, stop', outputs: ['1=fine'] },
      }),
    ).toBe("crewline checkpoint resume abc --location cp --set-output 1=fine '--answer=- no, stop'");
  });

  it('says why an edit with a carriage return is not repeated', () => {
    expect(
      startOverCommand({
        command: 'crewline',
        mode: 'fork',
        from: 'abc',
        location: 'cp',
        flags: { outputs: ['1=short\r\nedit'] },
      }),
    ).toContain('hold characters a command line does not show');
  });
});
