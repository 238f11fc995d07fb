import { createHash } from 'node:crypto';
import { HeadCache } from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { metadataColumns } from './metadata-row.js';
import { CHUNK_BLOCK_SIZE, quoteIdentifier } from './schema.js';

/** The SQL texts of one schema (its name quoted into them once). */
export interface SchemaSql {
  write: string;
  claim: string;
  reserveBlocks: string;
  read: string;
  headTree: string;
  metadataById: string;
}

/** The types of `crewline_write`'s parameters, in order (see schema.ts). */
const writeParameterTypes = [
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'integer',
  'integer',
  'text',
  'text',
  'bigint',
  'bigint[]',
  'text[]',
  'text[]',
  'boolean',
  'integer',
  'integer',
  'text[]',
  'bigint',
  'bigint',
  'text',
];

/** How many values one call of `crewline_write` takes. */
export const writeParameterCount = writeParameterTypes.length;

/** A call of `crewline_write` whose parameters are `$first` onwards. */
function writeCall(quotedSchema: string, first: number): string {
  const parameters = writeParameterTypes.map((type, index) => `$${first + index}::${type}`).join(', ');
  return `${quotedSchema}.crewline_write(${parameters})`;
}

function schemaSql(schema: string): SchemaSql {
  const s = quoteIdentifier(schema);
  // The chunk tree of a head, in one recursive query over `refs` (offsets from the node's id).
  const tree = (root: string) =>
    `tree(id) AS (${root} UNION SELECT c.id - r.offset_by FROM tree t JOIN ${s}.chunks c ON c.id = t.id CROSS JOIN LATERAL unnest(string_to_array(c.refs, ',')::bigint[]) AS r(offset_by))`;
  return {
    write: `SELECT o_stream, o_size FROM ${writeCall(s, 1)}`,
    claim: `SELECT o_status, o_holder, o_expires_at, o_left_ms, o_head FROM ${s}.crewline_claim_lease($1::text, $2::text, $3::text, $4::text, $5::bigint)`,
    reserveBlocks: `SELECT nextval('${s}.chunk_blocks') AS block FROM generate_series(1, $1::integer)`,
    // One statement, so one snapshot: a concurrent prune or collection never shows half a checkpoint.
    read: `WITH RECURSIVE
      cp AS (SELECT * FROM ${s}.checkpoints WHERE id = $1),
      ${tree('SELECT head FROM cp')},
      segs(stream_id, parent_id, base, upto, depth) AS (
        SELECT st.id, st.parent_id, st.base, cp.event_count, 0 FROM cp JOIN ${s}.streams st ON st.id = cp.stream_id
        UNION ALL
        SELECT p.id, p.parent_id, p.base, LEAST(g.upto, g.base), g.depth + 1
          FROM segs g JOIN ${s}.streams p ON p.id = g.parent_id
          WHERE LEAST(g.upto, g.base) > 0 AND g.depth < 1000000)
      SELECT 0 AS kind, 0::bigint AS key, json_build_array(id, created_at, lineage_id, parent_id, branch, "trigger",
          entities, event_count, size_bytes, format_version, library_version, head, metadata_text)::text AS body FROM cp
      UNION ALL SELECT 1, c.id, c.body FROM tree t JOIN ${s}.chunks c ON c.id = t.id
      UNION ALL SELECT 2, row_number() OVER (ORDER BY g.depth DESC, e.seq), e.body
        FROM segs g JOIN ${s}.events e ON e.stream_id = g.stream_id AND e.seq >= g.base AND e.seq < g.upto
      ORDER BY kind, key`,
    headTree: `WITH RECURSIVE ${tree(`SELECT head FROM ${s}.checkpoints WHERE id = $1`)}
      SELECT c.id, c.body FROM tree t JOIN ${s}.chunks c ON c.id = t.id`,
    metadataById: `SELECT ${metadataColumns} FROM ${s}.checkpoints WHERE id = $1`,
  };
}

/** A prepared-statement name for a text: stable, short, and distinct per schema. */
export function statementName(text: string): string {
  return `crewline_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
}

/**
 * Everything one provider keeps for one location (a schema on a server): its pool, whether the layout
 * is known to be usable, the SQL, the chunk ids it may hand out, the heads it wrote last, and the
 * queue of writes per run.
 */
export class SchemaHandle {
  readonly sql: SchemaSql;
  readonly quoted: string;
  /** The layout was created or checked for writing (migrated to the current version). */
  writable: Promise<void> | undefined;
  /** The layout was found and checked for reading. */
  readable = false;
  /** Chunk ids this provider may still use: ranges `[next, end)` of reserved blocks. */
  readonly #ids: { next: number; end: number }[] = [];
  /** Head trees of recent writes, by checkpoint id. */
  readonly heads = new HeadCache();
  /** The tail of each run's write queue. */
  readonly queues = new Map<string, Promise<void>>();
  /** Statements writing groups, by the number of checkpoints they write. */
  readonly #groupWrites = new Map<number, string>();

  constructor(
    readonly location: string,
    readonly schema: string,
    readonly pool: pg.Pool,
  ) {
    this.sql = schemaSql(schema);
    this.quoted = quoteIdentifier(schema);
  }

  /**
   * One statement that calls `crewline_write` `count` times, one checkpoint after another (the
   * branches of a UNION ALL run in order, and each call sees what the calls before it inserted), so
   * a group is one round trip and one transaction. Each row carries the checkpoint's position.
   */
  groupWriteSql(count: number): string {
    let text = this.#groupWrites.get(count);
    if (text === undefined) {
      const calls: string[] = [];
      for (let index = 0; index < count; index += 1)
        calls.push(
          `SELECT ${index} AS o_index, o_size FROM ${writeCall(this.quoted, index * writeParameterCount + 1)}`,
        );
      text = calls.join(' UNION ALL ');
      this.#groupWrites.set(count, text);
    }
    return text;
  }

  /** Takes one chunk id; undefined when the block is used up (reserve another and encode again). */
  takeId(): number | undefined {
    let range = this.#ids[0];
    while (range !== undefined && range.next >= range.end) {
      this.#ids.shift();
      range = this.#ids[0];
    }
    if (range === undefined) return undefined;
    const id = range.next;
    range.next += 1;
    return id;
  }

  /** Adds blocks (numbers from the `chunk_blocks` sequence) to the ids this provider hands out. */
  addBlocks(blocks: readonly number[]): void {
    for (const block of blocks)
      this.#ids.push({ next: block * CHUNK_BLOCK_SIZE, end: (block + 1) * CHUNK_BLOCK_SIZE });
  }

  /**
   * Runs `work` after every earlier write of the same run through this provider has finished, so a
   * run's checkpoints are stored in the order they were written and each one finds its parent
   * stored (and its head tree in memory) — what makes a write store only what changed.
   */
  inOrder<T>(lineageId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(lineageId);
    const result = previous === undefined ? work() : previous.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(lineageId, tail);
    void tail.then(() => {
      if (this.queues.get(lineageId) === tail) this.queues.delete(lineageId);
    });
    return result;
  }

  /**
   * {@link inOrder} for work that writes checkpoints of several runs (a group spanning a fork: the
   * checkpoints before it and after it): after every earlier write of each, before any later one.
   */
  inOrderOfAll<T>(lineageIds: readonly string[], work: () => Promise<T>): Promise<T> {
    const [first, ...rest] = lineageIds;
    if (first === undefined) return work();
    return this.inOrder(first, () => this.inOrderOfAll(rest, work));
  }
}
