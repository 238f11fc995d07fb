// The markdown report of the realistic benchmark (bench/results/realistic.md): what a run pays per
// checkpoint first, then storage, growth per window, restore and listing, and each target's gap.
import { formatBytes, formatMs, markdownTable, summarize } from './bench-statistics.js';
import { type VariantResult, WINDOW } from './realistic-measure.js';
import type { RestoreResult } from './realistic-restore.js';

/** The targets of issue #13, measured on what a run pays. */
export const REALISTIC_TARGETS = {
  /** A checkpoint end to end (what the run pays for it) at least this many times faster than `SqliteSaver.put`. */
  speedup: 40,
  /** db + WAL (open) and db (closed) at most this many times the final checkpoint. */
  storagePerFinal: 2.5,
  /** Flat: the last full window's median at most this many times the first window's. */
  growth: 1.5,
} as const;

function median(values: readonly number[]): number {
  return summarize(values).median;
}

function mean(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return values.length === 0 ? 0 : sum / values.length;
}

/**
 * Medians of each window of {@link WINDOW} checkpoints; `every` > 1 when only every n-th was timed,
 * `rounds` > 1 for samples of several runs interleaved by checkpoint.
 */
export function windowMedians(samples: readonly number[], every = 1, rounds = 1): number[] {
  const windows: number[][] = [];
  for (const [index, sample] of samples.entries()) {
    const window = Math.floor((Math.floor(index / rounds) * every) / WINDOW);
    windows[window] ??= [];
    windows[window].push(sample);
  }
  return windows.map((window) => median(window));
}

/**
 * Last full window's median over the first window's (a short last window is the run's end), or
 * undefined for a run of fewer than two full windows.
 */
export function growthOf(result: VariantResult): number | undefined {
  const full = Math.floor(checkpointsOf(result) / WINDOW);
  if (full < 2) return undefined;
  const medians = windowMedians(result.endToEndMs, 1, result.rounds);
  return medians[full - 1]! / medians[0]!;
}

/**
 * Median over checkpoints of end to end minus the provider's write: what the run pays around the
 * write (snapshot, redaction, the document handed to the provider).
 */
export function aroundWriteOf(result: VariantResult): number {
  return median(result.endToEndMs.map((endToEnd, index) => endToEnd - result.providerMs[index]!));
}

/** Checkpoints of one run of the variant. */
function checkpointsOf(result: VariantResult): number {
  return result.endToEndMs.length / result.rounds;
}

function saverOf(result: VariantResult) {
  return result.peers.find((peer) => peer.name.startsWith('LangGraph'));
}

function mastraOf(result: VariantResult) {
  return result.peers.find((peer) => peer.name.startsWith('Mastra'));
}

/** SqliteSaver.put's median over crewline's end-to-end median, or undefined without the peer. */
export function speedupOf(
  result: VariantResult,
  column: 'endToEndMs' | 'providerMs' | 'floorMs' = 'endToEndMs',
) {
  const saver = saverOf(result);
  return saver === undefined || saver.putMs.length === 0
    ? undefined
    : median(saver.putMs) / median(result[column]);
}

const ratio = (value: number | undefined) => (value === undefined ? 'n/a' : `${value.toFixed(1)}×`);
const times = (value: number) => `${value.toFixed(2)}×`;
const peerMedian = (peer: { putMs: number[] } | undefined) =>
  peer === undefined || peer.putMs.length === 0 ? 'n/a' : formatMs(median(peer.putMs));
const every = (result: VariantResult) =>
  (result.variant.peerEvery ?? 1) > 1 ? ` (1 state in ${result.variant.peerEvery})` : '';

/** Table 1: what a run pays per checkpoint, end to end first, then the provider alone and the peers. */
export function costTable(results: readonly VariantResult[]): string {
  return markdownTable(
    [
      'scenario (SQLite, checkpoint on every event)',
      'checkpoints (× runs)',
      'checkpoint end to end (taken in its event + its share of the commit), median ms',
      'end to end p99 ms',
      'end to end mean ms (all checkpoint work / checkpoints)',
      'SqliteSaver.put median ms',
      `end to end vs SqliteSaver (target ≥ ${REALISTIC_TARGETS.speedup}×)`,
      'checkpoints per commit (mean)',
      'commit median / p99 ms (what a barrier waits)',
      'provider write alone, median ms',
      'snapshot + redaction (end to end − provider), median ms',
      'provider alone vs SqliteSaver',
      'SQLite alone for the same rows (the floor), median ms',
      'floor vs SqliteSaver',
      'LibSQLStore snapshot median ms',
      'growth, last / first window (end to end)',
    ],
    results.map((result) => [
      result.variant.label,
      result.rounds > 1 ? `${checkpointsOf(result)} × ${result.rounds}` : String(checkpointsOf(result)),
      formatMs(median(result.endToEndMs)),
      formatMs(summarize(result.endToEndMs).p99),
      formatMs(mean(result.endToEndMs)),
      peerMedian(saverOf(result)) + every(result),
      ratio(speedupOf(result)),
      result.checkpointsPerCommit.toFixed(2),
      `${formatMs(median(result.commitMs))} / ${formatMs(summarize(result.commitMs).p99)}`,
      formatMs(median(result.providerMs)),
      formatMs(aroundWriteOf(result)),
      ratio(speedupOf(result, 'providerMs')),
      result.floorMs.length === 0 ? 'n/a' : formatMs(median(result.floorMs)),
      ratio(speedupOf(result, 'floorMs')),
      peerMedian(mastraOf(result)) + every(result),
      growthOf(result) === undefined ? 'n/a (one window)' : times(growthOf(result)!),
    ]),
  );
}

/** Table 2: what the database holds against the final checkpoint, open and closed, and the peers' files. */
export function storageTable(results: readonly VariantResult[]): string {
  const target = REALISTIC_TARGETS.storagePerFinal;
  return markdownTable(
    [
      'scenario',
      'final checkpoint',
      `db + WAL open / final (target ≤ ${target}×)`,
      `db closed / final (target ≤ ${target}×)`,
      'db + WAL open',
      'db closed',
      'SqliteSaver file',
      'LibSQLStore file',
    ],
    results.map((result) => [
      result.variant.label,
      formatBytes(result.finalBytes),
      times(result.openBytes / result.finalBytes),
      times(result.closedBytes / result.finalBytes),
      formatBytes(result.openBytes),
      formatBytes(result.closedBytes),
      formatBytes(saverOf(result)?.storedBytes) + every(result),
      formatBytes(mastraOf(result)?.storedBytes),
    ]),
  );
}

/** Table 3: medians per window of {@link WINDOW} checkpoints: end to end / provider alone / SqliteSaver.put. */
export function windowTable(results: readonly VariantResult[]): string {
  const columns = results.map((result) => ({
    endToEnd: windowMedians(result.endToEndMs, 1, result.rounds),
    provider: windowMedians(result.providerMs, 1, result.rounds),
    saver: windowMedians(saverOf(result)?.putMs ?? [], result.variant.peerEvery ?? 1, result.rounds),
  }));
  const windows = Math.max(...columns.map((column) => column.endToEnd.length));
  const checkpoints = Math.max(...results.map(checkpointsOf));
  const rows: string[][] = [];
  for (let window = 0; window < windows; window += 1) {
    rows.push([
      `${window * WINDOW + 1}–${Math.min((window + 1) * WINDOW, checkpoints)}`,
      ...columns.map((column) => {
        const endToEnd = column.endToEnd[window];
        if (endToEnd === undefined) return '';
        const saver = column.saver[window];
        return `${formatMs(endToEnd)} / ${formatMs(column.provider[window]!)} / ${saver === undefined ? '-' : formatMs(saver)}`;
      }),
    ]);
  }
  return markdownTable(['checkpoints', ...results.map((result) => result.variant.label)], rows);
}

/** Table 4: restore and listing over the filled database, beside SqliteSaver.getTuple. */
export function restoreTable(restore: RestoreResult): string {
  const row = (
    label: string,
    summary: RestoreResult['listMs'],
    cpu: RestoreResult['listMs'] | undefined,
    note: string,
  ) => [
    label,
    formatMs(summary.median),
    formatMs(summary.p99),
    cpu === undefined ? '—' : formatMs(cpu.median),
    String(summary.count),
    note,
  ];
  const { cpuMs } = restore;
  const versus = (summary: RestoreResult['listMs'], cpu: RestoreResult['listMs']) =>
    `${(summary.median / restore.getTupleMs.median).toFixed(2)}× getTuple's median (target ≤ 1×); CPU ${(cpu.median / cpuMs.getTuple.median).toFixed(2)}×`;
  return markdownTable(
    ['operation', 'median ms', 'p99 ms', 'median CPU ms', 'samples', 'against the target'],
    [
      row(
        `\`Crew.fromCheckpoint\` of the latest of ${restore.checkpoints}`,
        restore.fromCheckpointMs,
        cpuMs.fromCheckpoint,
        versus(restore.fromCheckpointMs, cpuMs.fromCheckpoint),
      ),
      row(
        'of which loading the checkpoint (its `checkpoint_restore_completed` event)',
        restore.fromCheckpointLoadMs,
        undefined,
        'the rest of the line above is rebuilding the crew',
      ),
      row(
        `provider \`latest\` + \`readDocument\` of the latest of ${restore.checkpoints}`,
        restore.providerReadMs,
        cpuMs.providerRead,
        versus(restore.providerReadMs, cpuMs.providerRead),
      ),
      row(
        'the same, then every event read (the whole document parsed, as getTuple gives it; a resumed run parses its events before it continues)',
        restore.providerReadWithEventsMs,
        cpuMs.providerReadWithEvents,
        versus(restore.providerReadWithEventsMs, cpuMs.providerReadWithEvents),
      ),
      row(
        `LangGraph \`SqliteSaver.getTuple\` of the latest of ${restore.checkpoints}`,
        restore.getTupleMs,
        cpuMs.getTuple,
        '1×',
      ),
      row(
        `provider \`list\` of all ${restore.checkpoints} (metadata)`,
        restore.listMs,
        undefined,
        'SPEC §8: ≤ 200 ms',
      ),
    ],
  );
}

/** One line per target: met or not, and by how much it is missed. */
export function verdicts(results: readonly VariantResult[], restore: RestoreResult | undefined): string[] {
  const lines: string[] = [];
  const { speedup, storagePerFinal, growth } = REALISTIC_TARGETS;
  for (const result of results) {
    const label = result.variant.label;
    const measured = speedupOf(result);
    if (measured !== undefined) {
      lines.push(
        `- ${label}: end to end ${measured.toFixed(1)}× SqliteSaver.put (target ≥ ${speedup}×) — ${measured >= speedup ? 'met' : `missed: the median checkpoint must cost ${formatMs(median(result.endToEndMs) * (measured / speedup))} ms or less, it costs ${formatMs(median(result.endToEndMs))} ms (provider write ${formatMs(median(result.providerMs))} ms, snapshot + redaction ${formatMs(aroundWriteOf(result))} ms; SQLite alone for the same rows ${formatMs(median(result.floorMs))} ms)`}`,
      );
    }
    for (const [name, bytes] of [
      ['open (db + WAL)', result.openBytes],
      ['closed', result.closedBytes],
    ] as const) {
      const value = bytes / result.finalBytes;
      lines.push(
        `- ${label}: storage ${name} ${value.toFixed(2)}× the final checkpoint (target ≤ ${storagePerFinal}×) — ${value <= storagePerFinal ? 'met' : `missed by ${formatBytes(bytes - storagePerFinal * result.finalBytes)}`}`,
      );
    }
    const grown = growthOf(result);
    if (grown !== undefined) {
      lines.push(
        `- ${label}: end-to-end cost, last full window / first ${grown.toFixed(2)}× (flat: ≤ ${growth}×) — ${grown <= growth ? 'met' : 'missed: the cost grows with the run'}`,
      );
    }
  }
  if (restore !== undefined) {
    const value = restore.fromCheckpointMs.median / restore.getTupleMs.median;
    lines.push(
      `- restore the latest of ${restore.checkpoints} with \`Crew.fromCheckpoint\`: ${value.toFixed(2)}× getTuple's time (target ≤ 1×) — ${value <= 1 ? 'met' : `missed by ${formatMs(restore.fromCheckpointMs.median - restore.getTupleMs.median)} ms`}`,
    );
    const cpu = restore.cpuMs.fromCheckpoint.median / restore.cpuMs.getTuple.median;
    lines.push(
      `- the same in CPU time (the process's, per call; what the load of a shared machine does not add): ${cpu.toFixed(2)}× getTuple's — ${cpu <= 1 ? 'met' : `missed by ${formatMs(restore.cpuMs.fromCheckpoint.median - restore.cpuMs.getTuple.median)} ms`}`,
    );
    const read = restore.providerReadMs.median / restore.getTupleMs.median;
    lines.push(
      `- the provider's own latest + read: ${read.toFixed(2)}× getTuple's time — ${read <= 1 ? 'met' : `missed by ${formatMs(restore.providerReadMs.median - restore.getTupleMs.median)} ms`}`,
    );
  }
  return lines;
}
