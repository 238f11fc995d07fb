/** Version of the layout below, kept in the `schema_version` row of `crewline_meta`. */
export const SCHEMA_VERSION = 2;

/** Marks a schema as crewline's, so the provider never writes into another application's tables. */
export const APPLICATION_MARKER = 'crewline-checkpoints';

/** The tables of the layout: a schema holding one of them without crewline's marker is refused. */
export const crewlineTables = ['checkpoints', 'streams', 'events', 'chunks', 'leases'] as const;

/**
 * First half of the advisory lock key of a schema (the second is `hashtext` of the schema name).
 * Every write holds it shared; a prune, a garbage collection and a migration hold it exclusively,
 * so that what a write relies on (its parent's chunks and events) cannot vanish under it.
 */
export const LOCK_CLASS = 1668441463;

/** Quotes an identifier already checked by `checkSchemaName` (letters, digits, `_`). */
export function quoteIdentifier(name: string): string {
  return `"${name}"`;
}

/** The SQL of the advisory lock of schema `schema` (a string literal inside the expression). */
export function lockKey(schema: string): string {
  return `${LOCK_CLASS}, hashtext('${schema}')`;
}

/** One step of the layout: the statements that bring a schema from `version - 1` to `version`. */
export interface Migration {
  version: number;
  statements: (schema: string) => string;
}

/**
 * `crewline_write`: the whole of a write in one call — lease check, event placement, inserts — so
 * that a write is one round trip and one transaction. `p_chunk_refs` holds each chunk's `refs`:
 * `'{id,…}'` in version 1, offsets (`'1,2,…'`, see version 2) since; empty for none.
 */
const writeFunction = (schema: string, refs: 'ids' | 'offsets'): string => {
  const s = quoteIdentifier(schema);
  return `
CREATE FUNCTION ${s}.crewline_write(
  p_id text, p_created_at text, p_lineage_id text, p_parent_id text, p_branch text, p_trigger text,
  p_entities text, p_event_count integer, p_format_version integer, p_library_version text,
  p_metadata_text text, p_head bigint, p_chunk_ids bigint[], p_chunk_bodies text[], p_chunk_refs text[],
  p_needs_parent boolean, p_parent_events integer, p_events_from integer, p_events text[],
  p_size_base bigint, p_max_bytes bigint, p_lease_owner text
) RETURNS TABLE (o_stream bigint, o_size bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_owner text;
  v_holder text;
  v_left double precision;
  v_parent_stream bigint;
  v_parent_count integer;
  v_shared integer := 0;
  v_offset integer;
  v_new_bytes bigint;
  v_stream bigint;
  v_base_bytes bigint := 0;
  v_size bigint;
  v_walk bigint;
  v_walk_parent bigint;
  v_walk_base integer;
  v_walk_base_bytes bigint;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(${lockKey(schema)});
  IF p_lease_owner IS NOT NULL THEN
    -- FOR SHARE: a claim (FOR UPDATE) waits until this write has committed, then sees its checkpoint.
    SELECT l.owner, l.holder, extract(epoch FROM (l.expires_at - clock_timestamp())) * 1000
      INTO v_owner, v_holder, v_left
      FROM ${s}.leases l WHERE l.lineage_id = p_lineage_id FOR SHARE;
    IF v_owner IS DISTINCT FROM p_lease_owner OR v_left <= 0 THEN
      RAISE EXCEPTION 'lease lost' USING ERRCODE = 'CL002', DETAIL = json_build_object(
        'held', v_owner IS NOT NULL, 'mine', v_owner = p_lease_owner, 'holder', v_holder, 'expiresInMs', v_left)::text;
    END IF;
  END IF;
  IF p_parent_id IS NOT NULL THEN
    SELECT c.stream_id, c.event_count INTO v_parent_stream, v_parent_count
      FROM ${s}.checkpoints c WHERE c.id = p_parent_id;
  END IF;
  IF p_needs_parent AND v_parent_stream IS NULL THEN
    RAISE EXCEPTION 'parent missing' USING ERRCODE = 'CL003';
  END IF;
  IF v_parent_stream IS NOT NULL THEN
    v_shared := LEAST(p_parent_events, v_parent_count, p_event_count);
  END IF;
  IF p_events_from > v_shared THEN
    RAISE EXCEPTION 'need events' USING ERRCODE = 'CL004', DETAIL = v_shared::text;
  END IF;
  v_offset := v_shared - p_events_from;
  IF coalesce(cardinality(p_events), 0) - v_offset <> p_event_count - v_shared THEN
    RAISE EXCEPTION 'the write holds % events from %, the checkpoint % in all', cardinality(p_events),
      p_events_from, p_event_count USING ERRCODE = 'CL005';
  END IF;
  SELECT coalesce(sum(octet_length(e)), 0) INTO v_new_bytes FROM unnest(p_events[v_offset + 1 :]) e;
  IF v_parent_stream IS NOT NULL AND v_shared = v_parent_count THEN
    UPDATE ${s}.streams s SET length = p_event_count, bytes = s.bytes + v_new_bytes
      WHERE s.id = v_parent_stream AND s.length = v_shared
      RETURNING s.id, s.bytes - v_new_bytes INTO v_stream, v_base_bytes;
  END IF;
  IF v_stream IS NULL THEN
    v_base_bytes := 0;
    v_walk := NULL;
    IF v_shared > 0 THEN
      v_walk := v_parent_stream;
      LOOP
        SELECT s.parent_id, s.base, s.base_bytes INTO v_walk_parent, v_walk_base, v_walk_base_bytes
          FROM ${s}.streams s WHERE s.id = v_walk;
        IF NOT FOUND THEN
          RAISE EXCEPTION 'event stream % is missing', v_walk USING ERRCODE = 'CL005';
        END IF;
        IF v_shared > v_walk_base THEN
          SELECT e.end_bytes INTO v_base_bytes FROM ${s}.events e WHERE e.stream_id = v_walk AND e.seq = v_shared - 1;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'event % of stream % is missing', v_shared - 1, v_walk USING ERRCODE = 'CL005';
          END IF;
          EXIT;
        ELSIF v_shared = v_walk_base THEN
          v_base_bytes := v_walk_base_bytes;
          EXIT;
        END IF;
        IF v_walk_parent IS NULL THEN
          RAISE EXCEPTION 'event stream % has a base but no parent', v_walk USING ERRCODE = 'CL005';
        END IF;
        v_walk := v_walk_parent;
      END LOOP;
    END IF;
    INSERT INTO ${s}.streams (parent_id, base, base_bytes, length, bytes)
      VALUES (v_walk, v_shared, v_base_bytes, p_event_count, v_base_bytes + v_new_bytes)
      RETURNING id INTO v_stream;
  END IF;
  v_size := p_size_base + CASE WHEN p_event_count > 0 THEN v_base_bytes + v_new_bytes ELSE 0 END;
  IF v_size > p_max_bytes THEN
    RAISE EXCEPTION 'too large' USING ERRCODE = 'CL001', DETAIL = v_size::text;
  END IF;
  INSERT INTO ${s}.events (stream_id, seq, body, end_bytes)
    SELECT v_stream, v_shared + e.ord::integer - 1, e.body,
           v_base_bytes + sum(octet_length(e.body)) OVER (ORDER BY e.ord)
      FROM unnest(p_events[v_offset + 1 :]) WITH ORDINALITY AS e(body, ord);
  INSERT INTO ${s}.chunks (id, body, refs)
    SELECT c.id, c.body, ${refs === 'ids' ? `NULLIF(c.refs, '{}')::bigint[]` : `NULLIF(c.refs, '')`}
      FROM unnest(p_chunk_ids, p_chunk_bodies, p_chunk_refs) AS c(id, body, refs);
  INSERT INTO ${s}.checkpoints (id, created_at, lineage_id, parent_id, branch, "trigger", entities, event_count,
      size_bytes, stream_id, format_version, library_version, head, metadata_text)
    VALUES (p_id, p_created_at, p_lineage_id, p_parent_id, p_branch, p_trigger, p_entities, p_event_count,
      v_size, v_stream, p_format_version, p_library_version, p_head, p_metadata_text);
  o_stream := v_stream;
  o_size := v_size;
  RETURN NEXT;
END
$fn$;
`;
};

/**
 * Version 1.
 *
 * - `checkpoints`: one row per checkpoint — the metadata a listing needs, where its events end
 *   (`stream_id`, `event_count`) and its head (`head`: the chunk holding the root of its chunk tree).
 *   Ids sort by creation time (collation "C": byte order, as the core compares them), so the primary
 *   key is the time index; `(lineage_id, id)` serves a run's listing, its latest checkpoint (a lease
 *   claim's head check) and per-run pruning; `(branch, id)` a branch's; `parent_id` finds fork points.
 * - `streams`: a lineage segment of events. A stream continues its parent stream after its first
 *   `base` events; `length` and `bytes` are its events (inherited ones included) and their byte total.
 *   A write appends to its parent's stream when the parent is the stream's newest checkpoint, with an
 *   `UPDATE … WHERE length = <parent's count>` that two concurrent continuations cannot both pass.
 * - `events`: append-only event lines, keyed by stream and position, with the running byte total.
 * - `chunks`: the chunk tree of heads (chunk-tree/tree-node.ts in @crewline/runtime-state), written
 *   once and shared by every later checkpoint whose value did not change; `refs` lists the chunks a
 *   node's body names (NULL for a value, which names none), so that reads and garbage collection
 *   walk a tree in one recursive query. Ids are allocated by the writers, in
 *   blocks of {@link CHUNK_BLOCK_SIZE} from the `chunk_blocks` sequence: a node's body names its
 *   children's ids, so they must be known before the write's one round trip.
 * - `leases`: one row per fenced lineage head (owner token, holder, expiry by the server's clock).
 * - `crewline_write`: the whole of a write in one call — lease check, event placement, inserts — so
 *   that a write is one round trip and one transaction.
 * - `crewline_claim_lease`: a claim in one call (row lock on the lease, head check, grant).
 */
const version1 = (schema: string): string => {
  const s = quoteIdentifier(schema);
  return `
CREATE TABLE ${s}.checkpoints (
  id text COLLATE "C" PRIMARY KEY,
  created_at text NOT NULL,
  lineage_id text COLLATE "C" NOT NULL,
  parent_id text COLLATE "C",
  branch text COLLATE "C" NOT NULL,
  "trigger" text NOT NULL,
  entities text NOT NULL,
  event_count integer NOT NULL,
  size_bytes bigint NOT NULL,
  stream_id bigint NOT NULL,
  format_version integer NOT NULL,
  library_version text NOT NULL,
  head bigint NOT NULL,
  metadata_text text
);
CREATE INDEX checkpoints_by_lineage ON ${s}.checkpoints (lineage_id, id);
CREATE INDEX checkpoints_by_branch ON ${s}.checkpoints (branch, id);
CREATE INDEX checkpoints_by_parent ON ${s}.checkpoints (parent_id) WHERE parent_id IS NOT NULL;
CREATE TABLE ${s}.streams (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  parent_id bigint,
  base integer NOT NULL,
  base_bytes bigint NOT NULL,
  length integer NOT NULL,
  bytes bigint NOT NULL
);
CREATE TABLE ${s}.events (
  stream_id bigint NOT NULL,
  seq integer NOT NULL,
  body text NOT NULL,
  end_bytes bigint NOT NULL,
  PRIMARY KEY (stream_id, seq)
);
CREATE TABLE ${s}.chunks (
  id bigint PRIMARY KEY,
  body text NOT NULL,
  refs bigint[]
);
CREATE SEQUENCE ${s}.chunk_blocks;
CREATE TABLE ${s}.leases (
  lineage_id text COLLATE "C" PRIMARY KEY,
  owner text NOT NULL,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);
INSERT INTO ${s}.crewline_meta (key, value) VALUES ('pending_garbage', '0') ON CONFLICT (key) DO NOTHING;

${writeFunction(schema, 'ids')}
CREATE FUNCTION ${s}.crewline_claim_lease(
  p_lineage_id text, p_owner text, p_holder text, p_checkpoint_id text, p_ttl_ms bigint
) RETURNS TABLE (o_status text, o_holder text, o_expires_at timestamptz, o_left_ms double precision, o_head text)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_owner text;
  v_holder text;
  v_expires timestamptz;
  v_head text;
  v_attempt integer := 0;
BEGIN
  LOOP
    v_attempt := v_attempt + 1;
    SELECT l.owner, l.holder, l.expires_at INTO v_owner, v_holder, v_expires
      FROM ${s}.leases l WHERE l.lineage_id = p_lineage_id FOR UPDATE;
    IF v_owner IS NOT NULL AND v_owner <> p_owner AND v_expires > clock_timestamp() THEN
      RETURN QUERY SELECT 'held'::text, v_holder, v_expires,
        (extract(epoch FROM (v_expires - clock_timestamp())) * 1000)::double precision, NULL::text;
      RETURN;
    END IF;
    -- Read after the lock: a write under the previous holder's lease has committed by now.
    SELECT max(c.id) INTO v_head FROM ${s}.checkpoints c WHERE c.lineage_id = p_lineage_id;
    IF v_head IS DISTINCT FROM p_checkpoint_id THEN
      RETURN QUERY SELECT 'moved'::text, NULL::text, NULL::timestamptz, NULL::double precision, v_head;
      RETURN;
    END IF;
    IF v_owner IS NOT NULL THEN
      UPDATE ${s}.leases l SET owner = p_owner, holder = p_holder,
          expires_at = clock_timestamp() + p_ttl_ms * interval '1 millisecond'
        WHERE l.lineage_id = p_lineage_id RETURNING l.expires_at INTO v_expires;
      RETURN QUERY SELECT 'granted'::text, p_holder, v_expires, p_ttl_ms::double precision, v_head;
      RETURN;
    END IF;
    INSERT INTO ${s}.leases (lineage_id, owner, holder, expires_at)
      VALUES (p_lineage_id, p_owner, p_holder, clock_timestamp() + p_ttl_ms * interval '1 millisecond')
      ON CONFLICT (lineage_id) DO NOTHING
      RETURNING expires_at INTO v_expires;
    IF v_expires IS NOT NULL THEN
      RETURN QUERY SELECT 'granted'::text, p_holder, v_expires, p_ttl_ms::double precision, v_head;
      RETURN;
    END IF;
    -- Another claim inserted the row first (and has committed): decide again against it.
    IF v_attempt >= 3 THEN
      RAISE EXCEPTION 'lease row of % keeps changing', p_lineage_id;
    END IF;
  END LOOP;
END
$fn$;
`;
};

/**
 * Version 2: `refs` holds a node's references as text offsets from the node's own id
 * (`"1,2,1184"`: ids `id - 1`, `id - 2`, `id - 1184`) instead of a `bigint[]` of ids.
 *
 * A node's children are mostly written just before it, from the same block of ids, so the offsets
 * are short; a `bigint[]` costs 24 bytes of header and 8 per id. On crew-50 `refs` went from 191 KiB
 * to 82 KiB, 5 % of what the run stores (`bench/results/postgres.md`). Reads and the garbage
 * collection turn them back into ids with `string_to_array` (no JSON parsing of bodies).
 */
const version2 = (schema: string): string => {
  const s = quoteIdentifier(schema);
  return `
ALTER TABLE ${s}.chunks ADD COLUMN ref_offsets text;
UPDATE ${s}.chunks c SET ref_offsets = (SELECT string_agg((c.id - r.id)::text, ',') FROM unnest(c.refs) AS r(id))
  WHERE c.refs IS NOT NULL;
ALTER TABLE ${s}.chunks DROP COLUMN refs;
ALTER TABLE ${s}.chunks RENAME COLUMN ref_offsets TO refs;
${writeFunction(schema, 'offsets').replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION')}
`;
};

/** Every migration, oldest first; the last one's version is {@link SCHEMA_VERSION}. */
export const migrations: readonly Migration[] = [
  { version: 1, statements: version1 },
  { version: 2, statements: version2 },
];

/** Size of the chunk id blocks a writer reserves (see `chunks` above). */
export const CHUNK_BLOCK_SIZE = 65_536;
