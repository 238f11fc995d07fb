import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import {
  type CheckpointConfigInput,
  parseCheckpointConfig,
  resolveCheckpointSetting,
  triggersOn,
} from './config.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

function errorOf(action: () => unknown): CrewlineError {
  try {
    action();
  } catch (error) {
    if (CrewlineError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('parseCheckpointConfig', () => {
  it('applies the defaults of SPEC §2', () => {
    expect(parseCheckpointConfig(true)).toEqual({
      location: './.checkpoints',
      onEvents: ['task_completed'],
      provider: undefined,
      maxCheckpoints: undefined,
      restoreFrom: undefined,
      onConflict: 'error',
      leaseTtlMs: undefined,
    });
  });

  it('keeps given values', () => {
    const provider = new InMemoryProvider();
    const config = parseCheckpointConfig({
      location: './cp',
      onEvents: ['*'],
      provider,
      maxCheckpoints: 5,
      restoreFrom: './cp/x.json',
    });
    expect(config).toMatchObject({
      location: './cp',
      onEvents: ['*'],
      maxCheckpoints: 5,
      restoreFrom: './cp/x.json',
    });
    expect(config.provider).toBe(provider);
  });

  it('names an unknown key and says "use `location`" for directory', () => {
    const error = errorOf(() => parseCheckpointConfig({ directory: './x' } as CheckpointConfigInput));
    expect(error.code).toBe('invalid_config');
    expect(error.message).toContain('unknown option "directory"; use `location`');
    expect(
      errorOf(() => parseCheckpointConfig({ colour: 'red' } as CheckpointConfigInput)).message,
    ).toContain('"colour"');
  });

  it('names the known option closest to a misspelt one and says how to fix it', () => {
    const message = errorOf(() => parseCheckpointConfig({ locaton: './x' } as CheckpointConfigInput)).message;
    expect(message).toContain('unknown option "locaton" — did you mean "location"?');
    expect(message).toMatch(/Rename or remove it \(known options: location, onEvents, .*redact\)/);
    expect(
      errorOf(() => parseCheckpointConfig({ onEvent: ['*'] } as CheckpointConfigInput)).message,
    ).toContain('did you mean "onEvents"?');
    expect(
      errorOf(() => parseCheckpointConfig({ maxcheckpoints: 3 } as CheckpointConfigInput)).message,
    ).toContain('did you mean "maxCheckpoints"?');
    // Nothing close: no guess, still the known options and the fix.
    const unrelated = errorOf(() =>
      parseCheckpointConfig({ colour: 'red' } as CheckpointConfigInput),
    ).message;
    expect(unrelated).not.toContain('did you mean');
    expect(unrelated).toContain('unknown option "colour"; remove it (known options: location');
    // A name every object has is still an unknown option, not a renamed one.
    expect(
      errorOf(() => parseCheckpointConfig({ constructor: 1 } as unknown as CheckpointConfigInput)).message,
    ).toContain('unknown option "constructor"; remove it');
    // Inside redact: the option's path, and the names redact knows.
    const nested = errorOf(() =>
      parseCheckpointConfig({ redact: { name: ['ssn'] } } as unknown as CheckpointConfigInput),
    ).message;
    expect(nested).toContain('redact: unknown option "name" — did you mean "names"?');
    expect(nested).toContain('(known options: names, patterns, values)');
  });

  it('names an unknown event type', () => {
    const error = errorOf(() => parseCheckpointConfig({ onEvents: ['task_complete' as 'task_completed'] }));
    expect(error.message).toContain('unknown event type "task_complete"');
  });

  it('rejects bad values with path: message lines', () => {
    expect(errorOf(() => parseCheckpointConfig({ maxCheckpoints: 0 })).message).toContain(
      'maxCheckpoints: must be at least 1',
    );
    expect(errorOf(() => parseCheckpointConfig({ provider: {} as never })).message).toContain(
      'provider: must be a checkpoint provider',
    );
    expect(errorOf(() => parseCheckpointConfig('yes' as never)).code).toBe('invalid_config');
  });
});

describe('resolveCheckpointSetting', () => {
  it('inherits through undefined, stops at false, enables with true, uses objects', () => {
    expect(resolveCheckpointSetting([undefined, undefined, true])?.location).toBe('./.checkpoints');
    expect(resolveCheckpointSetting([undefined, false, true])).toBeUndefined();
    expect(resolveCheckpointSetting([{ location: './agent' }, true])?.location).toBe('./agent');
    expect(resolveCheckpointSetting([undefined, undefined])).toBeUndefined();
  });

  it('matches trigger events and the wildcard', () => {
    expect(triggersOn({ onEvents: ['task_completed'] }, 'task_completed')).toBe(true);
    expect(triggersOn({ onEvents: ['task_completed'] }, 'llm_call_completed')).toBe(false);
    expect(triggersOn({ onEvents: ['*'] }, 'SIGINT')).toBe(true);
  });
});

describe('onEvents and provider versions', () => {
  it("accepts '*' alone as well as in a list", () => {
    expect(parseCheckpointConfig({ onEvents: '*' }).onEvents).toEqual(['*']);
    expect(parseCheckpointConfig({ onEvents: ['*'] }).onEvents).toEqual(['*']);
  });

  it('still names an unknown event type inside a list', () => {
    const error = errorOf(() =>
      parseCheckpointConfig({ onEvents: ['task_completed', 'nope' as 'task_completed'] }),
    );
    expect(error.message).toContain('"nope"');
  });

  it('refuses a provider that implements a newer contract, saying what to upgrade', () => {
    const provider = Object.assign(new InMemoryProvider(), { contractVersion: 2 });
    const error = errorOf(() => parseCheckpointConfig({ provider: provider as never }));
    expect(error.code).toBe('unsupported_version');
    expect(error.message).toContain('upgrade @crewline/runtime-state');
  });
});
