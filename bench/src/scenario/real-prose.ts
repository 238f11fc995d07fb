// Text for the realistic scenario, sliced from real English prose so that checkpoints do not
// compress the way generated word salad does: the licence texts Debian ships in
// /usr/share/common-licenses (package base-files, present on every Debian machine). Where they are
// missing, the generated prose of prose.ts stands in and the report says so.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomSource } from '../random-source.js';
import { prose } from './prose.js';

/** Where the realistic scenario's text comes from. */
export interface ProseSource {
  /** What the text is, for the report (`'/usr/share/common-licenses (17 files, 261 KB)'`). */
  description: string;
  /** First 12 hex digits of the corpus' SHA-256: two reports with the same one sliced the same text. */
  digest: string;
  /** About `bytes` characters of text, the same for the same seed on the same corpus. */
  slice(seed: number, bytes: number): string;
}

/** The Debian directory of licence texts read by default. */
export const COMMON_LICENSES = '/usr/share/common-licenses';

/** Reads every regular file of `directory` once (symbolic links to the same text count once), sorted by name. */
function readCorpus(directory: string): { text: string; files: number } | undefined {
  if (!existsSync(directory)) return undefined;
  const seen = new Set<string>();
  const texts: string[] = [];
  for (const name of readdirSync(directory).sort()) {
    const path = realpathSync(join(directory, name));
    if (seen.has(path) || !statSync(path).isFile()) continue;
    seen.add(path);
    texts.push(readFileSync(path, 'utf8'));
  }
  // Collapsing whitespace keeps the words and sentences but drops the layout of the licence files,
  // whose runs of indentation would make slices more compressible than a model's answer.
  const text = texts.join('\n\n').replace(/\s+/g, ' ').trim();
  return text.length < 16_384 ? undefined : { text, files: seen.size };
}

/**
 * The realistic scenario's text source: slices of the licence texts in `directory` (default
 * {@link COMMON_LICENSES}), or the generated prose of prose.ts when the directory is missing or holds
 * less than 16 KB.
 */
export function proseSource(directory: string = COMMON_LICENSES): ProseSource {
  const corpus = readCorpus(directory);
  if (corpus === undefined) {
    return {
      description: `generated word prose (bench/src/scenario/prose.ts; ${directory} not found)`,
      digest: 'generated',
      slice: (seed, bytes) => prose(seed, bytes),
    };
  }
  const { text } = corpus;
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 12);
  return {
    description: `${directory} (${corpus.files} files, ${Math.round(text.length / 1024)} KiB of licence text)`,
    digest,
    slice(seed, bytes) {
      // Several pieces from seeded places, each starting at a word, so a long slice is not one
      // stretch of a single licence and two slices of one seed are equal.
      const random = randomSource(seed);
      const pieces: string[] = [];
      let length = 0;
      while (length < bytes) {
        const want = Math.min(bytes - length, 512 + Math.floor(random() * 1024));
        let start = Math.floor(random() * (text.length - want - 64));
        const space = text.indexOf(' ', start);
        if (space >= 0 && space < start + 64) start = space + 1;
        const piece = text.slice(start, start + want);
        pieces.push(piece);
        length += piece.length + 1;
      }
      return pieces.join(' ').slice(0, bytes);
    },
  };
}
