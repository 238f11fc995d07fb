import { damagedData } from '@crewline/runtime-state/internal';
import { component } from '../errors.js';

/**
 * Shortest string (in characters between its quotes) worth storing as a reference to an earlier
 * event: below it, the reference (about 20 characters) saves too little to pay for the lookup.
 */
const MIN_REFERENCED_CHARACTERS = 256;

/** The remembered strings stop growing past this many characters (oldest forgotten first). */
const MAX_REMEMBERED_CHARACTERS = 4_194_304;

/**
 * First character of a stored event line that holds references (schema version 6): an event line
 * itself is a JSON object and starts with `{`.
 */
const REFERENCES_MARK = '~';

/** Where a string first appeared: the event's index in its lineage and the string's offset in its line. */
interface FirstSight {
  index: number;
  start: number;
}

/** One reference of a stored line: insert at `at` of the stored text `length` characters of event `index` from `start`. */
type Reference = [at: number, index: number, start: number, length: number];

/**
 * The long strings of the events one connection appended to one event stream, by content. A run
 * repeats its long texts from event to event — a model's answer is in `llm_call_completed`, then in
 * `agent_execution_completed` and `task_completed` — and storing each once cuts what a `'*'` run
 * keeps by about a third. References only point back into the same lineage (to events a reader of
 * the checkpoint reads anyway, before the one that refers to them), so pruning and garbage
 * collection never leave one dangling.
 */
export class EventStrings {
  /** The stream the remembered strings were appended to; they are only used for writes continuing it. */
  #streamId: number | undefined;
  readonly #seen = new Map<string, FirstSight>();
  #characters = 0;

  /** Forgets every string (another connection wrote, the stream changed, or a write failed). */
  forget(): void {
    this.#streamId = undefined;
    this.#seen.clear();
    this.#characters = 0;
  }

  /**
   * Starts a write that appends to `streamId`: remembered strings of another stream are forgotten.
   * Returns the list the write collects its new strings in, for {@link remember} once it committed.
   */
  begin(streamId: number): Pending {
    if (this.#streamId !== streamId) {
      this.forget();
      this.#streamId = streamId;
    }
    return { streamId, strings: new Map() };
  }

  /**
   * The text to store for event `index` whose line is `text`: the line itself, or, when it repeats
   * long strings of earlier events of the stream, the line without them and where to find them.
   * New long strings go to `pending` (remembered only once the write committed).
   */
  encode(text: string, index: number, pending: Pending): string {
    let references: Reference[] | undefined;
    let kept = '';
    let copiedUpTo = 0;
    for (let open = text.indexOf('"'); open !== -1; ) {
      const close = closingQuote(text, open);
      if (close === -1) break;
      const start = open + 1;
      if (close - start >= MIN_REFERENCED_CHARACTERS) {
        const content = text.slice(start, close);
        // Strings of earlier events of this same write count too (a checkpoint on
        // `task_completed` appends a whole task's events at once).
        const first = this.#seen.get(content) ?? pending.strings.get(content);
        if (first === undefined) {
          pending.strings.set(content, { index, start });
        } else {
          references ??= [];
          kept += text.slice(copiedUpTo, start);
          references.push([kept.length, first.index, first.start, content.length]);
          copiedUpTo = close;
        }
      }
      open = text.indexOf('"', close + 1);
    }
    if (references === undefined) return text;
    return `${REFERENCES_MARK}${JSON.stringify(references)}\n${kept}${text.slice(copiedUpTo)}`;
  }

  /** Remembers the strings of a committed write (see {@link begin}). */
  remember(pending: Pending): void {
    if (pending.streamId !== this.#streamId) return;
    for (const [content, sight] of pending.strings) {
      if (this.#seen.has(content)) continue;
      this.#seen.set(content, sight);
      this.#characters += content.length;
    }
    for (const [content] of this.#seen) {
      if (this.#characters <= MAX_REMEMBERED_CHARACTERS) break;
      this.#seen.delete(content);
      this.#characters -= content.length;
    }
  }
}

/** The new long strings of one write, remembered by {@link EventStrings.remember} after its commit. */
export interface Pending {
  streamId: number;
  strings: Map<string, FirstSight>;
}

/** Index of the quote that closes the JSON string opened at `open` (skipping escaped quotes); -1 if none. */
function closingQuote(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  while (close !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === 92 /* \ */) backslashes += 1;
    if (backslashes % 2 === 0) return close;
    close = text.indexOf('"', close + 1);
  }
  return -1;
}

/**
 * Turns stored event lines (in lineage order, the first at index 0) back into the event lines that
 * were written, in place: a line with references takes its strings from the earlier lines.
 * `maxCharacters` bounds the characters of the resolved lines: each reference can copy every earlier
 * line, so damaged references could double the text line after line; past the bound the lines are
 * damaged data (the caller passes the checkpoint's stored size, which holds every line), found before
 * any line that long is built.
 */
export function resolveEventReferences(lines: string[], maxCharacters = Number.POSITIVE_INFINITY): string[] {
  let total = 0;
  const count = (characters: number, index: number) => {
    total += characters;
    if (total > maxCharacters) {
      throw damagedData(
        component,
        `event ${index} makes the event lines longer than the ${maxCharacters} characters the checkpoint's stored size allows`,
      );
    }
  };
  for (let index = 0; index < lines.length; index += 1) {
    const stored = lines[index]!;
    if (stored.charCodeAt(0) !== REFERENCES_MARK.charCodeAt(0)) {
      count(stored.length, index);
      continue;
    }
    const newline = stored.indexOf('\n');
    let references: unknown;
    try {
      references = JSON.parse(stored.slice(1, newline === -1 ? 0 : newline));
    } catch {
      references = undefined;
    }
    if (newline === -1 || !Array.isArray(references)) {
      throw damagedData(component, `event ${index} has unreadable references`);
    }
    const kept = stored.slice(newline + 1);
    let text = '';
    let copiedUpTo = 0;
    for (const reference of references) {
      const [at, source, start, length] = Array.isArray(reference) ? reference : [];
      const from = typeof source === 'number' && source >= 0 && source < index ? lines[source]! : undefined;
      if (
        from === undefined ||
        !isCount(at) ||
        !isCount(start) ||
        !isCount(length) ||
        at < copiedUpTo ||
        at > kept.length ||
        start + length > from.length
      ) {
        throw damagedData(component, `event ${index} refers to text it cannot have`);
      }
      count(at - copiedUpTo + length, index);
      text += kept.slice(copiedUpTo, at) + from.slice(start, start + length);
      copiedUpTo = at;
    }
    count(kept.length - copiedUpTo, index);
    lines[index] = text + kept.slice(copiedUpTo);
  }
  return lines;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
