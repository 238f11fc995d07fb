import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOPIC, parseTutorialOptions } from './options.js';

describe('parseTutorialOptions', () => {
  it('runs from the start with JSON storage by default', () => {
    expect(parseTutorialOptions([], {})).toEqual({
      mode: 'run',
      topic: DEFAULT_TOPIC,
      storage: 'json',
      offline: false,
    });
  });

  it('reads resume, fork, edit and branch', () => {
    expect(parseTutorialOptions(['--resume', './.checkpoints'], {})).toMatchObject({
      mode: 'resume',
      reference: './.checkpoints',
    });
    expect(
      parseTutorialOptions(['--fork', 'x.json', '--edit-research', 'new text', '--branch', 'b'], {}),
    ).toMatchObject({ mode: 'fork', reference: 'x.json', editResearch: 'new text', branch: 'b' });
  });

  it('switches to SQLite with --sqlite or CREWLINE_STORAGE=sqlite, and takes a location', () => {
    expect(parseTutorialOptions(['--sqlite'], {}).storage).toBe('sqlite');
    expect(parseTutorialOptions([], { CREWLINE_STORAGE: 'SQLite' }).storage).toBe('sqlite');
    expect(parseTutorialOptions([], { CREWLINE_STORAGE: 'json' }).storage).toBe('json');
    expect(parseTutorialOptions([], { CREWLINE_CHECKPOINT_LOCATION: '/data/cp' }).location).toBe('/data/cp');
    expect(
      parseTutorialOptions(['--location', 'here'], { CREWLINE_CHECKPOINT_LOCATION: 'there' }).location,
    ).toBe('here');
  });

  it('refuses what cannot work, saying what to type', () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--resume', 'a', '--fork', 'b'], {}, /cannot be used together/],
      [['--edit-research', 'x'], {}, /only applies to --fork/],
      [['--resume', 'a', '--branch', 'b'], {}, /only applies to --fork/],
      [['--resume', ' '], {}, /needs a checkpoint reference/],
      [['--unknown'], {}, /Unknown option/],
      [[], { CREWLINE_STORAGE: 'postgres' }, /use json or sqlite/],
    ];
    for (const [argv, env, message] of cases) {
      let thrown: unknown;
      try {
        parseTutorialOptions(argv, env);
      } catch (error) {
        thrown = error;
      }
      expect(CrewlineError.hasCode(thrown, 'invalid_argument'), String(argv)).toBe(true);
      expect((thrown as Error).message).toMatch(message);
      expect((thrown as Error).message).toContain('pnpm demo --help');
    }
  });

  it('answers --help', () => {
    expect(parseTutorialOptions(['--help'], {}).mode).toBe('help');
  });
});
