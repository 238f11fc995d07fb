import { describe, expect, it } from 'vitest';
import { jsonDocument, jsonLine } from './json-output.js';

describe('--json output', () => {
  it('escapes DEL and C1 controls the JSON way and parses back to the same values', () => {
    const body = { trigger: 'task_\u009b31m\u007fdone', lines: 'one\ntwo\u001b' };
    for (const text of [jsonDocument(body), jsonLine(body)]) {
      expect(text).toContain('task_\\u009b31m\\u007fdone');
      expect(text).not.toMatch(/[\u007f-\u009f]/);
      expect(JSON.parse(text)).toEqual({ schemaVersion: 1, ...body });
    }
    expect(jsonLine(body).trimEnd()).not.toContain('\n');
    expect(jsonDocument(body).split('\n').length).toBeGreaterThan(3);
  });
});
