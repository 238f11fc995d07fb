// One damaged database, opened through SqliteProvider: list, latest, reads, the latest loaded through
// runtime-state, then a write of a fresh checkpoint, and `crewline checkpoint list` on it. Besides
// the oracles every case has, a write must never be accepted into a database that fails
// `PRAGMA quick_check`, that claims a newer schema or another application, and an accepted write
// must leave a database that passes quick_check.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { APPLICATION_MARKER, SCHEMA_VERSION } from '@crewline/provider-sqlite/internal';
import {
  type CheckpointDocument,
  type CheckpointWrite,
  createCheckpointWrite,
  createProviderRegistry,
  loadCheckpoint,
  newCheckpointId,
  newLineageId,
  providerEntryOf,
  readDocument,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { CaseRecorder, entriesOutside, prototypeChanges, snapshotPrototypes } from './case-oracle.js';
import { type CaseResult, outcomeOf, refusalCode } from './case-result.js';
import { isInternalError, runCliQuietly } from './cli-read.js';
import { type DatabaseDamage, userVersionOf } from './database-damage.js';
import { databaseHealth } from './database-health.js';
import { pick, type Random } from './random-tools.js';

export interface DatabaseCaseSetup {
  index: number;
  damage: DatabaseDamage;
  /** The real database, undamaged. */
  database: Buffer;
  /** The document the fresh write is made from. */
  document: CheckpointDocument;
  random: Random;
  /** A directory of its own for the case (removed afterwards). */
  root: string;
  forbidden: readonly string[];
}

/** A new checkpoint on a branch of its own, as a new run would write it. */
function freshWrite(document: CheckpointDocument): CheckpointWrite {
  return createCheckpointWrite({
    metadata: {
      ...document.metadata,
      id: newCheckpointId(),
      parentId: null,
      lineageId: newLineageId(),
      branch: 'fuzz',
      trigger: 'manual',
      createdAt: new Date().toISOString(),
    },
    inputs: document.inputs,
    entities: document.entities,
    events: document.events,
    parentEventCount: 0,
  });
}

/** Runs one database case; never throws for what it checks. */
export async function runDatabaseCase(setup: DatabaseCaseSetup): Promise<CaseResult> {
  const started = performance.now();
  const { root, random } = setup;
  const location = join(root, 'a', 'b', 'c', 'd', 'database', 'checkpoints.db');
  const side = `${root}-side.db`;
  mkdirSync(dirname(location), { recursive: true });
  const damaged = setup.damage.damage(setup.database, random, side);
  writeFileSync(location, damaged.bytes);
  const before = databaseHealth(location, side);
  const userVersion = userVersionOf(damaged.bytes);
  const synchronous = random() < 0.5;

  const recorder = new CaseRecorder();
  const prototypes = snapshotPrototypes();
  const provider = new SqliteProvider();
  const listed = await recorder.attempt('list', () => provider.list(location));
  await recorder.attempt('latest', () => provider.latest(location));
  const entries: StoredCheckpoint[] = listed.value ?? [];
  const reads = entries.length === 0 ? [] : [entries[0]!, entries.at(-1)!, pick(random, entries)];
  // The events too: a read hands them over unparsed, and parses and checks them when they are read.
  for (const entry of reads)
    await recorder.attempt(
      'read',
      async () => (await readDocument(provider, location, entry.id)).events.length,
    );
  await recorder.attempt('load the latest', () =>
    loadCheckpoint(location, createProviderRegistry([providerEntryOf(provider)])),
  );
  const written = await recorder.attempt(synchronous ? 'writeSync' : 'write', () =>
    synchronous
      ? provider.writeSync(location, freshWrite(setup.document))
      : provider.write(location, freshWrite(setup.document)),
  );
  await recorder.attempt('close', () => provider.close());
  const run = await recorder.attempt('crewline list', () =>
    runCliQuietly(['checkpoint', 'list', location], root),
  );
  if (run.value && isInternalError(run.value))
    recorder.fail('CLI internal error', 'crewline list', run.value.stderr.slice(0, 400));

  if (written.result.done) {
    const operation = synchronous ? 'writeSync' : 'write';
    if (before.quickCheck !== 'ok')
      recorder.fail(
        'write accepted into a database failing quick_check',
        operation,
        before.quickCheck.slice(0, 300),
      );
    if (userVersion !== undefined && userVersion > SCHEMA_VERSION)
      recorder.fail(
        'write accepted into a newer schema',
        operation,
        `user_version ${userVersion} > ${SCHEMA_VERSION}`,
      );
    if (before.application !== undefined && before.application !== APPLICATION_MARKER)
      recorder.fail(
        "write accepted into another application's database",
        operation,
        `application "${before.application}"`,
      );
    const after = databaseHealth(location, side);
    if (before.quickCheck === 'ok' && after.quickCheck !== 'ok')
      recorder.fail('write left a database failing quick_check', operation, after.quickCheck.slice(0, 300));
  }
  for (const change of prototypeChanges(prototypes))
    recorder.fail('prototype changed', 'the whole case', change);
  for (const path of entriesOutside(root, dirname(location), setup.forbidden))
    recorder.fail('file written outside the location', 'the whole case', path);
  rmSync(root, { recursive: true, force: true });
  const code = refusalCode(written.result);
  return {
    index: setup.index,
    suite: 'database',
    mutation: setup.damage.name,
    detail: `${damaged.detail}; quick_check before: ${before.quickCheck.slice(0, 120)}`,
    outcome: outcomeOf(written.result, recorder.failures),
    ...(code !== undefined ? { code } : {}),
    failures: recorder.failures,
    wallMs: performance.now() - started,
    resumed: false,
  };
}
