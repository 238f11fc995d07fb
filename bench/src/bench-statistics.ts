import { readFileSync } from 'node:fs';

export interface LatencySummary {
  count: number;
  median: number;
  p99: number;
  max: number;
  total: number;
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(fraction * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Median, p99 (nearest rank), max and total of latency samples in milliseconds. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((left, right) => left - right);
  return {
    count: sorted.length,
    median: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
    total: sorted.reduce((sum, value) => sum + value, 0),
  };
}

export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (value < 1) return value.toFixed(3);
  if (value < 100) return value.toFixed(2);
  return value.toFixed(0);
}

export function formatBytes(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return 'n/a';
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / (1024 * 1024)).toFixed(2)} MiB`;
}

/** A markdown table; cells are written as given. */
export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * Bytes this process has passed to write(2) and friends so far (Linux `/proc/self/io` `wchar`),
 * or undefined where that is not available.
 */
export function bytesWrittenByProcess(): number | undefined {
  try {
    const match = /^wchar:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the garbage collector when node was started with --expose-gc (less noise between runs). */
export function collectGarbageIfExposed(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
