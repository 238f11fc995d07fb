import { describe, expect, it } from 'vitest';
import { byContent, StoredForms } from './stored-forms.js';

const settle = <T>(value: T): T => value;

interface Owner {
  name: string;
  options: Record<string, unknown>;
  ready: boolean;
}

function formsCounting(): {
  forms: StoredForms<Owner, undefined, readonly [string, Record<string, unknown>], object>;
  builds: () => number;
} {
  let builds = 0;
  const forms = new StoredForms({
    sources: (owner: Owner, _context: undefined) => [owner.name, byContent(owner.options)] as const,
    build: ([name, options]) => {
      builds += 1;
      return { name, options: { ...options } };
    },
    keepable: (owner: Owner) => owner.ready,
  });
  return { forms, builds: () => builds };
}

describe('StoredForms', () => {
  it('keeps a stored form while its sources read the same, and builds it again once one changed', () => {
    const { forms, builds } = formsCounting();
    const owner: Owner = { name: 'a', options: { level: 1 }, ready: true };
    const first = forms.stored(owner, undefined, settle);
    expect(forms.stored(owner, undefined, settle)).toBe(first);
    owner.name = 'b';
    expect(forms.stored(owner, undefined, settle)).toEqual({ name: 'b', options: { level: 1 } });
    expect(builds()).toBe(2);
  });

  it('compares a byContent source by content: changed in place is found, a new equal object is not a change', () => {
    const { forms, builds } = formsCounting();
    const owner: Owner = { name: 'a', options: { level: 1, tags: ['x'] }, ready: true };
    const first = forms.stored(owner, undefined, settle);
    (owner.options.tags as string[]).push('y');
    expect(forms.stored(owner, undefined, settle)).toEqual({
      name: 'a',
      options: { level: 1, tags: ['x', 'y'] },
    });
    owner.options = { level: 1, tags: ['x', 'y'] };
    const again = forms.stored(owner, undefined, settle);
    expect(again).not.toBe(first);
    expect(forms.stored(owner, undefined, settle)).toBe(again);
    expect(builds()).toBe(2);
    const date = new Date(0);
    owner.options = { when: date };
    const dated = forms.stored(owner, undefined, settle);
    date.setTime(1000);
    expect(forms.stored(owner, undefined, settle)).not.toBe(dated);
  });

  it('builds every time a source it cannot copy (never a stale form), and follows cycles', () => {
    const { forms, builds } = formsCounting();
    const owner: Owner = { name: 'a', options: { run: () => 1 }, ready: true };
    forms.stored(owner, undefined, settle);
    forms.stored(owner, undefined, settle);
    expect(builds()).toBe(2);
    const cyclic: Record<string, unknown> = { level: 1 };
    cyclic.self = cyclic;
    owner.options = cyclic;
    const kept = forms.kept(owner, undefined, settle);
    expect(forms.holds(kept, owner, undefined)).toBe(true);
    cyclic.level = 2;
    expect(forms.holds(kept, owner, undefined)).toBe(false);
  });

  it('keeps nothing for an owner that may not be kept, and a kept form holds only for its owner', () => {
    const { forms, builds } = formsCounting();
    const owner: Owner = { name: 'a', options: {}, ready: false };
    expect(forms.kept(owner, undefined, settle)).toBeUndefined();
    forms.stored(owner, undefined, settle);
    forms.stored(owner, undefined, settle);
    expect(builds()).toBe(2);
    owner.ready = true;
    const kept = forms.kept(owner, undefined, settle);
    expect(forms.holds(kept, owner, undefined)).toBe(true);
    expect(forms.holds(kept, { ...owner }, undefined)).toBe(false);
    owner.ready = false;
    expect(forms.holds(kept, owner, undefined)).toBe(false);
  });
});
