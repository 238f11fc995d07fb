import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { z } from 'zod';

/** One text a knowledge source contributes, labelled with where it came from. */
export interface KnowledgeDocument {
  /** A label for results and prompts: the source name or file path. */
  origin: string;
  text: string;
}

/** The stored form of a source: its kind and its content (never re-read from disk on restore). */
export type KnowledgeSourceSnapshot =
  | { kind: 'string'; name: string; content: string }
  | { kind: 'text-file'; files: { path: string; content: string }[] };

/** Something that contributes text to a knowledge base. */
export interface KnowledgeSource {
  readonly kind: KnowledgeSourceSnapshot['kind'];
  documents(): KnowledgeDocument[];
  toJSON(): KnowledgeSourceSnapshot;
}

export interface StringKnowledgeSourceOptions {
  content: string;
  /** Label shown with results. Default `'string'`. */
  name?: string;
}

/** Knowledge given as a string in code. */
export class StringKnowledgeSource implements KnowledgeSource {
  readonly kind = 'string' as const;
  readonly content: string;
  readonly name: string;

  constructor(options: StringKnowledgeSourceOptions) {
    if (typeof options.content !== 'string') {
      throw new CrewlineError(
        'knowledge',
        'invalid_argument',
        'StringKnowledgeSource needs a `content` string',
      );
    }
    this.content = options.content;
    this.name = options.name ?? 'string';
  }

  documents(): KnowledgeDocument[] {
    return [{ origin: this.name, text: this.content }];
  }

  toJSON(): KnowledgeSourceSnapshot {
    return { kind: 'string', name: this.name, content: this.content };
  }
}

export interface TextFileKnowledgeSourceOptions {
  /** One or more text files (relative paths resolve against `cwd`). */
  paths: string | string[];
  /** Default `process.cwd()`. */
  cwd?: string;
  /** Default `'utf8'`. */
  encoding?: BufferEncoding;
}

/**
 * Knowledge from text files, read once when the source is created (a missing file fails early and
 * names the path). The content is what a checkpoint stores, so a restore never reads a path that a
 * checkpoint names.
 */
export class TextFileKnowledgeSource implements KnowledgeSource {
  readonly kind = 'text-file' as const;
  readonly #files: { path: string; content: string }[];

  constructor(options: TextFileKnowledgeSourceOptions | { files: { path: string; content: string }[] }) {
    if ('files' in options) {
      this.#files = options.files.map((file) => ({ ...file }));
      return;
    }
    const paths = Array.isArray(options.paths) ? options.paths : [options.paths];
    if (paths.length === 0) {
      throw new CrewlineError(
        'knowledge',
        'invalid_argument',
        'TextFileKnowledgeSource needs at least one path in `paths`',
      );
    }
    this.#files = paths.map((path) => {
      const absolute = resolve(options.cwd ?? process.cwd(), path);
      try {
        return { path, content: readFileSync(absolute, options.encoding ?? 'utf8') };
      } catch (error) {
        throw new CrewlineError(
          'knowledge',
          'read_failed',
          `cannot read knowledge file "${absolute}": ${error instanceof Error ? error.message : String(error)}; check the path in TextFileKnowledgeSource`,
          { cause: error },
        );
      }
    });
  }

  get paths(): string[] {
    return this.#files.map((file) => file.path);
  }

  documents(): KnowledgeDocument[] {
    return this.#files.map((file) => ({ origin: file.path, text: file.content }));
  }

  toJSON(): KnowledgeSourceSnapshot {
    return { kind: 'text-file', files: this.#files.map((file) => ({ ...file })) };
  }
}

export const knowledgeSourceSnapshotSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('string'), name: z.string(), content: z.string() }),
  z.object({
    kind: z.literal('text-file'),
    files: z.array(z.object({ path: z.string(), content: z.string() })),
  }),
]);

/** Rebuilds a source from its snapshot, without touching the filesystem. */
export function knowledgeSourceFromJSON(snapshot: KnowledgeSourceSnapshot): KnowledgeSource {
  return snapshot.kind === 'string'
    ? new StringKnowledgeSource({ content: snapshot.content, name: snapshot.name })
    : new TextFileKnowledgeSource({ files: snapshot.files });
}
