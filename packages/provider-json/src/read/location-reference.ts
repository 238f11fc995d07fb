import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import type { IdIndexKeeper } from '../id-index/id-index-keeper.js';
import type { ResolvedJsonProviderOptions } from '../options.js';
import { parseFileReference } from './file-reference.js';
import type { LocationReader } from './location-reader.js';

// What a reference given to JsonProvider.parseReference names: a checkpoint file (see
// file-reference.ts), a location or branch directory, or `directory#id`.

/** What resolving a reference needs of the provider. */
export interface ReferenceContext {
  options: Readonly<ResolvedJsonProviderOptions>;
  reader: LocationReader;
  /** Told of a file reference's checkpoint, so that the read that follows opens it by name. */
  index: IdIndexKeeper;
}

/** `JsonProvider.parseReference`: the location (and id) a reference names; undefined for anything else. */
export function parseLocationReference(
  context: ReferenceContext,
  reference: string,
): { location: string; id?: string; checkpoint?: StoredCheckpoint } | undefined {
  const { options, reader, index } = context;
  if (typeof reference !== 'string' || reference.length === 0 || reference.includes('\u0000'))
    return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(reference)) return undefined;
  const hash = reference.lastIndexOf('#');
  if (hash > 0) {
    const directory = reference.slice(0, hash);
    const id = reference.slice(hash + 1);
    if (!isDirectory(directory)) return undefined;
    const location = reader.rootOfDirectory(resolve(directory))?.location ?? resolve(directory);
    return id === '' ? { location } : { location, id };
  }
  const path = resolve(reference);
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    return undefined;
  }
  if (!isFile) return reader.rootOfDirectory(path) ?? { location: path };
  const file = parseFileReference(path, options.maxCheckpointBytes);
  if (!file) return undefined;
  const { id } = file.checkpoint;
  if (file.home === undefined) return { location: path, id, checkpoint: file.checkpoint };
  index.recordSync(file.home, { id, branch: file.checkpoint.branch, fileName: basename(path) }, false);
  return { location: file.home, id, checkpoint: file.checkpoint };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
