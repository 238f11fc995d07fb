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

  it('compares a function inside by identity, builds every time a value it cannot copy, and follows cycles', () => {
    const { forms, builds } = formsCounting();
    const run = () => 1;
    const owner: Owner = { name: 'a', options: { run }, ready: true };
    forms.stored(owner, undefined, settle);
    forms.stored(owner, undefined, settle);
    expect(builds()).toBe(1);
    owner.options = { run: () => 2 };
    forms.stored(owner, undefined, settle);
    expect(builds()).toBe(2);
    // A class instance holding a function: structuredClone cannot copy it, so it never holds.
    class Holder {
      constructor(readonly run: () => number) {}
    }
    owner.options = { holder: new Holder(run) };
    forms.stored(owner, undefined, settle);
    forms.stored(owner, undefined, settle);
    expect(builds()).toBe(4);
    const cyclic: Record<string, unknown> = { level: 1 };
    cyclic.self = cyclic;
    owner.options = cyclic;
    const kept = forms.kept(owner, undefined, settle);
    expect(forms.holds(kept, owner, undefined)).toBe(true);
    cyclic.level = 2;
    expect(forms.holds(kept, owner, undefined)).toBe(false);
  });

  it("copies a source's arrays and objects (its strings are shared: see copyOf), so an in-place change is seen", () => {
    const { forms, builds } = formsCounting();
    const long = 'x'.repeat(100_000);
    const owner: Owner = { name: 'a', options: { texts: [long, long], nested: { text: long } }, ready: true };
    const kept = forms.kept(owner, undefined, settle)!;
    const copy = (kept.values[1] as { value: { texts: string[]; nested: { text: string } } }).value;
    expect(copy).not.toBe(owner.options);
    expect(copy.texts).not.toBe((owner.options as { texts: string[] }).texts);
    expect(copy).toEqual(owner.options);
    (owner.options as { texts: string[] }).texts.push('more');
    expect(forms.holds(kept, owner, undefined)).toBe(false);
    expect(builds()).toBe(1);
  });

  // Found by a review: a part reached twice was copied (and compared) once per path, so a plain
  // structure where each level points twice at the next took 2^depth steps (forever at 40 levels).
  // Below 16 levels it was still compared by isDeepStrictEqual, which does the same: 2^24 steps
  // (8 s) at 40 levels, forever at 60.
  it('copies and compares a part reached twice once: shared parts and cycles', () => {
    const { forms, builds } = formsCounting();
    let level: Record<string, unknown> = { leaf: 'x' };
    for (let index = 0; index < 60; index += 1) level = { a: level, b: level };
    const cyclic: Record<string, unknown> = { name: 'n' };
    cyclic.left = cyclic;
    cyclic.right = cyclic;
    const owner: Owner = { name: 'a', options: { tree: level, cyclic }, ready: true };
    const kept = forms.kept(owner, undefined, settle)!;
    const copy = (
      kept.values[1] as { value: { tree: Record<string, unknown>; cyclic: Record<string, unknown> } }
    ).value;
    expect(copy.tree.a).toBe(copy.tree.b);
    expect(copy.cyclic.left).toBe(copy.cyclic);
    expect(forms.holds(kept, owner, undefined)).toBe(true);
    cyclic.name = 'm';
    expect(forms.holds(kept, owner, undefined)).toBe(false);
    expect(builds()).toBe(1);
  });

  it('copies a key named __proto__ as data', () => {
    const { forms } = formsCounting();
    const options = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const owner: Owner = { name: 'a', options, ready: true };
    const kept = forms.kept(owner, undefined, settle)!;
    const copy = (kept.values[1] as { value: Record<string, unknown> }).value;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(forms.holds(kept, owner, undefined)).toBe(true);
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
