import { stateError } from './errors.js';
import { nestingError } from './nesting-depth.js';

/** Largest checkpoint text the core will parse, unless told otherwise (128 MiB). */
export const DEFAULT_MAX_CHECKPOINT_BYTES = 128 * 1024 * 1024;

export interface DocumentTextParts {
  /** `format`, `formatVersion`, `libraryVersion` and `metadata`, already serialized. */
  header: string;
  inputs: string;
  entities: readonly string[];
  events: readonly string[];
}

/**
 * Lays a checkpoint out as human-readable JSON: the envelope and metadata on the first lines (so a
 * listing reads only the start of a file), entities indented, one event per line.
 */
export function joinDocumentText(parts: DocumentTextParts): string {
  const entities = parts.entities.length === 0 ? '[]' : `[\n${parts.entities.join(',\n')}\n]`;
  const events = parts.events.length === 0 ? '[]' : `[\n${parts.events.join(',\n')}\n]`;
  return `{${parts.header},\n"inputs": ${parts.inputs},\n"entities": ${entities},\n"events": ${events}\n}\n`;
}

export interface ParseOptions {
  /** Refuse texts larger than this many bytes. Default {@link DEFAULT_MAX_CHECKPOINT_BYTES}. */
  maxBytes?: number;
  /** Where the text came from, for error messages. */
  origin?: string;
}

/**
 * Parses checkpoint text: refuses oversized input, truncated or malformed JSON, and any raw
 * `__proto__` key (crewline itself never writes one; encoded values escape it), with typed errors.
 */
export function parseDocumentText(text: string, options: ParseOptions = {}): unknown {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES;
  const origin = options.origin ? ` (${options.origin})` : '';
  const size = Buffer.byteLength(text, 'utf8');
  if (size > maxBytes) {
    throw stateError(
      'too_large',
      `checkpoint${origin} is ${size} bytes, over the ${maxBytes}-byte limit; raise maxCheckpointBytes if you trust it`,
    );
  }
  try {
    return JSON.parse(text, (key, value) => {
      if (key === '__proto__') throw new ProtoKeyError();
      return value;
    });
  } catch (error) {
    if (error instanceof ProtoKeyError) {
      throw stateError(
        'corrupt_checkpoint',
        `checkpoint${origin} contains a "__proto__" key; refusing to load it`,
      );
    }
    // JSON.parse nests without limit, but calling a reviver recurses once per level: parse again
    // without one (a "__proto__" key then stays an own property) to say where the text nests too deeply.
    if (error instanceof RangeError) throw nestingError(JSON.parse(text), origin, error);
    const truncated = text.trimEnd().length === 0 || !text.trimEnd().endsWith('}');
    throw stateError(
      'corrupt_checkpoint',
      `checkpoint${origin} is not valid JSON${truncated ? ' (it looks truncated)' : ''}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

class ProtoKeyError extends Error {}
