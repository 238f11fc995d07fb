import type { SettledParts } from '../provider.js';

/** Spaces per level, as `entityText` indents (`JSON.stringify(entity, null, 2)`). */
const indentWidth = 2;

/**
 * The UTF-8 text of settled subtrees of a run's entities, kept per indentation depth. A run
 * checkpointing on every event writes the same completed tasks into hundreds of files: their text is
 * encoded once and the same buffer handed to every later file. One per run (beside its cached event
 * lines); an entry goes with its object.
 */
export class SettledTextCache {
  readonly #byDepth = new WeakMap<object, Map<number, Buffer>>();

  /** The text of `value` (settled: never changes) at `depth`, encoded on first use. */
  textOf(value: object, depth: number): Buffer {
    let forDepth = this.#byDepth.get(value);
    if (forDepth === undefined) {
      forDepth = new Map();
      this.#byDepth.set(value, forDepth);
    }
    let text = forDepth.get(depth);
    if (text === undefined) {
      text = Buffer.from(indentedText(value, depth), 'utf8');
      forDepth.set(depth, text);
    }
    return text;
  }
}

/** `JSON.stringify(value, null, 2)` as it reads nested `depth` levels deep. */
function indentedText(value: unknown, depth: number): string {
  const text = JSON.stringify(value, null, indentWidth);
  // JSON text holds no raw line break inside a string (it escapes them): every one is a new line.
  return depth === 0 ? text : text.replaceAll('\n', `\n${' '.repeat(depth * indentWidth)}`);
}

/** Plain data the walk below lays out itself; anything else goes through JSON.stringify whole. */
function isPlainContainer(value: object): boolean {
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function skipped(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/**
 * `JSON.stringify(value, null, 2)` as UTF-8 pieces, byte for byte: the text of every subtree the
 * run settled comes from `cache` (encoded once per run), the rest is laid out here. Concatenated,
 * the pieces are exactly the UTF-8 encoding of the whole text.
 */
export function indentedJsonPieces(
  value: unknown,
  settled: SettledParts | undefined,
  cache: SettledTextCache,
): Buffer[] {
  const pieces: Buffer[] = [];
  let pending = '';
  const flush = () => {
    if (pending.length > 0) pieces.push(Buffer.from(pending, 'utf8'));
    pending = '';
  };
  const write = (item: unknown, depth: number): void => {
    if (item === null || typeof item !== 'object') {
      pending += JSON.stringify(item);
      return;
    }
    if (settled?.has(item)) {
      flush();
      pieces.push(cache.textOf(item, depth));
      return;
    }
    if (!isPlainContainer(item)) {
      pending += indentedText(item, depth);
      return;
    }
    const inner = `\n${' '.repeat((depth + 1) * indentWidth)}`;
    if (Array.isArray(item)) {
      if (item.length === 0) {
        pending += '[]';
        return;
      }
      pending += '[';
      for (let index = 0; index < item.length; index += 1) {
        pending += index === 0 ? inner : `,${inner}`;
        const element: unknown = item[index];
        // Where JSON.stringify writes null for what it cannot hold in an array.
        if (skipped(element)) pending += 'null';
        else write(element, depth + 1);
      }
      pending += `\n${' '.repeat(depth * indentWidth)}]`;
      return;
    }
    let first = true;
    for (const key of Object.keys(item)) {
      const member: unknown = (item as Record<string, unknown>)[key];
      if (skipped(member)) continue;
      pending += first ? `{${inner}` : `,${inner}`;
      first = false;
      pending += `${JSON.stringify(key)}: `;
      write(member, depth + 1);
    }
    pending += first ? '{}' : `\n${' '.repeat(depth * indentWidth)}}`;
  };
  write(value, 0);
  flush();
  return pieces;
}
