import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addRedaction } from './add-redaction.js';
import { CrewlineError } from './errors.js';
import { isSecretKey } from './secret-names.js';
import { redactSecretsInText } from './secret-patterns.js';

describe('addRedaction', () => {
  it('adds names, patterns and values the user wants redacted', () => {
    const legacyPassphrase = `lp${randomBytes(12).toString('hex')}`;
    // #region add-redaction
    addRedaction({
      names: ['employeeSsn'], // also employee_ssn, EMPLOYEE-SSN, managerEmployeeSsn
      patterns: [/\bEMP-\d{6}\b/, 'ACCT#[0-9]{8}'],
      values: [legacyPassphrase], // exact values, at least 8 characters
    });
    // #endregion add-redaction
    expect(isSecretKey('employee_ssn')).toBe(true);
    expect(isSecretKey('managerEmployeeSsn')).toBe(true);
    expect(isSecretKey('employee')).toBe(false);
    expect(redactSecretsInText(`badge EMP-123456, account ACCT#12345678, value ${legacyPassphrase}`)).toBe(
      'badge [REDACTED], account [REDACTED], value [REDACTED]',
    );
    expect(redactSecretsInText('employee_ssn=123-45-6789 is on file')).toBe(
      'employee_ssn=[REDACTED] is on file',
    );
  });

  it('refuses values too short to redact safely, empty names and invalid patterns, naming the entry', () => {
    const refusal = (options: Parameters<typeof addRedaction>[0]) => {
      try {
        addRedaction(options);
      } catch (error) {
        expect(CrewlineError.hasCode(error, 'invalid_argument')).toBe(true);
        return (error as Error).message;
      }
      throw new Error('addRedaction accepted bad options');
    };
    expect(refusal({ values: ['long-enough-value', 'abc'] })).toMatch(/values\[1\].*at least 8/);
    expect(refusal({ names: [' '] })).toMatch(/names\[0\]/);
    expect(refusal({ patterns: ['(unclosed'] })).toMatch(/patterns\[0\].*regular expression/);
    expect(refusal({ patterns: [/.*/] })).toMatch(/patterns\[0\].*empty/);
  });

  it('changes nothing when it refuses', () => {
    const value = `ok${randomBytes(12).toString('hex')}`;
    expect(() => addRedaction({ values: [value], patterns: ['(bad'] })).toThrow();
    expect(redactSecretsInText(`still ${value}`)).toBe(`still ${value}`);
  });
});
