// The shape of one class of hostile checkpoint files: a named way of turning a real checkpoint into
// a damaged or hostile one, deterministically from a seeded random stream.
import type { Random } from './random-tools.js';
import type { SeedCheckpoint } from './seed-material.js';

/** Where the case puts its files. */
export interface Sandbox {
  /** The case's own directory; the checkpoint location is several levels below it. */
  root: string;
  /** The checkpoint location (a directory). */
  location: string;
}

export interface MutatedCheckpoint {
  /** The file's bytes. */
  content: Buffer | string;
  /** What was done, for the report of a failing case. */
  detail: string;
  /**
   * Put the file in the location under a name that is not a checkpoint file name (a standalone
   * checkpoint, which JsonProvider reads on its own) instead of where its run wrote it.
   */
  standalone?: boolean;
}

export interface JsonMutation {
  name: string;
  description: string;
  mutate(seed: SeedCheckpoint, random: Random, sandbox: Sandbox): MutatedCheckpoint;
}
