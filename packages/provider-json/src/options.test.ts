import { DEFAULT_MAX_CHECKPOINT_BYTES } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { JsonProvider } from './json-provider.js';

describe('JsonProvider options', () => {
  it('applies defaults', () => {
    expect(new JsonProvider().options).toEqual({
      maxCheckpointBytes: DEFAULT_MAX_CHECKPOINT_BYTES,
      fsync: true,
      fileMode: 0o600,
      directoryMode: 0o700,
    });
    expect(new JsonProvider({ fsync: false, maxCheckpointBytes: 10 }).options).toMatchObject({
      fsync: false,
      maxCheckpointBytes: 10,
    });
  });

  it('refuses unknown and wrong options with a typed error naming them', () => {
    const cases: [unknown, RegExp][] = [
      [{ directory: './x' }, /Unrecognized key.*"directory"/],
      [{ maxCheckpointBytes: -1 }, /maxCheckpointBytes: must be at least 1/],
      [{ maxCheckpointBytes: 1.5 }, /maxCheckpointBytes: must be a whole number/],
      [{ fsync: 'yes' }, /fsync: must be true or false/],
      [{ fileMode: 0o1777 }, /fileMode: must be at most/],
      ['fast', /must be an object/],
    ];
    for (const [options, message] of cases) {
      expect(() => new JsonProvider(options as never)).toThrow(
        expect.objectContaining({ code: 'invalid_config', message: expect.stringMatching(message) }),
      );
    }
  });

  it('declares its kind and capabilities', () => {
    const provider = new JsonProvider();
    expect(provider.kind).toBe('json');
    expect(provider.capabilities).toEqual({
      syncWrite: true,
      incremental: false,
      leases: false,
      backgroundWrites: true,
    });
  });
});
