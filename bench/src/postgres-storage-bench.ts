// crew-50 (SPEC §8) through PostgresProvider on a local server: median and p99 write, bytes stored
// (pg_total_relation_size of the schema's tables) against the final checkpoint, and the cost of a
// lease claim and renewal. Run with
//   node --expose-gc --conditions=@crewline/source --import tsx bench/src/postgres-storage-bench.ts
// against CREWLINE_BENCH_POSTGRES_URL, or (without it) a throwaway durable cluster started with
// Debian's initdb. bench/package.json does not list @crewline/provider-postgres yet, so the provider
// is imported from its source by path; see packages/provider-postgres/README.md for the figures.
import { randomBytes } from 'node:crypto';
import type { CheckpointProvider, CheckpointWrite } from '@crewline/runtime-state';
import { PostgresProvider } from '../../packages/provider-postgres/src/index.js';
import {
  findPostgresBinaries,
  startCluster,
} from '../../packages/provider-postgres/src/test-support/test-cluster.js';
import { formatBytes, formatMs, markdownTable, summarize } from './bench-statistics.js';
import { createCrew50Run } from './scenario/crew-50.js';

interface Variant {
  name: string;
  options: ConstructorParameters<typeof PostgresProvider>[0];
  url: (cluster: { url: string; socketUrl: string }) => string;
}

async function playOnce(url: string, variant: Variant) {
  const inner = new PostgresProvider(variant.options);
  const samples: number[] = [];
  let last: CheckpointWrite | undefined;
  const timed: CheckpointProvider = {
    kind: inner.kind,
    contractVersion: inner.contractVersion,
    capabilities: inner.capabilities,
    resolveLocation: (location) => inner.resolveLocation(location),
    parseReference: (reference) => inner.parseReference(reference),
    read: (location, id) => inner.read(location, id),
    list: (location, query) => inner.list(location, query),
    latest: (location, query) => inner.latest(location, query),
    prune: (location, options) => inner.prune(location, options),
    delete: (location, id) => inner.delete(location, id),
    async write(location: string, checkpoint: CheckpointWrite) {
      last = checkpoint;
      const started = performance.now();
      const stored = await inner.write(location, checkpoint);
      samples.push(performance.now() - started);
      return stored;
    },
  };
  const location = inner.resolveLocation(
    `${url}${url.includes('?') ? '&' : '?'}schema=bench_${randomBytes(4).toString('hex')}`,
  );
  const run = createCrew50Run({});
  const state = run.addState({ provider: timed, location });
  await run.play(async (trigger) => {
    await state.writeCheckpoint({ trigger });
  });
  await state.settle();
  const stats = (await inner.stats(location))!;
  const claimMs: number[] = [];
  const renewMs: number[] = [];
  for (let index = 0; index < 50; index += 1) {
    const lineageId = `bench-${index}`;
    let started = performance.now();
    await inner.claimLease(location, {
      lineageId,
      owner: 'bench',
      holder: 'bench',
      checkpointId: null,
      ttlMs: 30_000,
    });
    claimMs.push(performance.now() - started);
    started = performance.now();
    await inner.renewLease(location, { lineageId, owner: 'bench' }, 30_000);
    renewMs.push(performance.now() - started);
  }
  await inner.close();
  return {
    samples,
    storedBytes: stats.totalBytes,
    finalBytes: Buffer.byteLength(last!.text(), 'utf8'),
    claim: summarize(claimMs).median,
    renew: summarize(renewMs).median,
  };
}

async function main() {
  const given = process.env.CREWLINE_BENCH_POSTGRES_URL;
  let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
  if (!given) {
    const binaries = findPostgresBinaries();
    if (!binaries) throw new Error('set CREWLINE_BENCH_POSTGRES_URL or install postgresql (initdb)');
    cluster = await startCluster(binaries, { durable: true });
  }
  const urls = given ? { url: given, socketUrl: given } : cluster!;
  const variants: Variant[] = [
    { name: 'TCP 127.0.0.1, synchronous_commit on', options: {}, url: (c) => c.url },
    { name: 'unix socket, synchronous_commit on', options: {}, url: (c) => c.socketUrl },
    {
      name: 'unix socket, synchronous_commit off',
      options: { synchronousCommit: 'off' },
      url: (c) => c.socketUrl,
    },
  ];
  const rows: string[][] = [];
  try {
    for (const variant of variants) {
      await playOnce(variant.url(urls), variant); // warm-up
      const rounds = Number(process.env.CREWLINE_BENCH_ROUNDS ?? 3);
      const pooled: number[] = [];
      let measured: Awaited<ReturnType<typeof playOnce>> | undefined;
      for (let round = 0; round < rounds; round += 1) {
        measured = await playOnce(variant.url(urls), variant);
        pooled.push(...measured.samples);
      }
      const summary = summarize(pooled);
      rows.push([
        variant.name,
        String(measured!.samples.length),
        formatMs(summary.median),
        formatMs(summary.p99),
        formatBytes(measured!.storedBytes),
        `${(measured!.storedBytes / measured!.finalBytes).toFixed(2)}×`,
        formatMs(measured!.claim),
        formatMs(measured!.renew),
      ]);
    }
  } finally {
    cluster?.stop();
  }
  console.log(
    markdownTable(
      ['variant', 'checkpoints', 'median write', 'p99 write', 'stored', 'stored / final', 'claim', 'renew'],
      rows,
    ),
  );
}

await main();
