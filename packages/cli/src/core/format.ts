import { escapeControls } from './control-characters.js';
/** `1.2 KB`, `3.4 MB`; `-` when unknown. */
export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return '-';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

/** `2026-11-21 09:30:00` in the local time zone (what a person at the terminal expects). */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** `09:30:00` local time. */
export function formatClock(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** `just now`, `5m ago`, `3h ago`, `2d ago`, relative to `now`. */
export function formatAge(iso: string, now = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes}m ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours}h ago`;
  return `${Math.round(hours / 24)}d ago`;
}

/** Whitespace (newlines included) collapsed to single spaces, for one-line previews. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** At most `width` characters; longer text ends in `...`. Counts code points, not UTF-16 units. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  const characters = Array.from(text);
  if (characters.length <= width) return text;
  if (width <= 3) return characters.slice(0, width).join('');
  return `${characters.slice(0, width - 3).join('')}...`;
}

/** A value as a person reads it in one line: strings quoted, everything else as JSON. */
export function formatValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return (
      JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? `${item}n` : item)) ?? String(value)
    );
  } catch {
    return String(value);
  }
}

/**
 * Characters in `text` (code points: a surrogate pair counts once). A plain loop: listings of
 * 10,000 checkpoints measure every cell, and `Array.from(text).length` costs ten times more.
 */
export function characterCount(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff) {
      count -= 1;
      index += 1;
    }
  }
  return count;
}

/** Rows of cells as columns separated by two spaces; the last column is not padded. */
export function formatColumns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (let index = 0; index < row.length; index += 1) {
      const width = characterCount(row[index]!);
      if (width > (widths[index] ?? 0)) widths[index] = width;
    }
  }
  return rows.map((row) => {
    let line = '';
    for (let index = 0; index < row.length; index += 1) {
      const cell = row[index]!;
      line +=
        index === row.length - 1
          ? cell
          : `${cell}${' '.repeat((widths[index] ?? 0) - characterCount(cell))}  `;
    }
    return line.trimEnd();
  });
}

/** A signed time difference a person reads quickly: `+39ms`, `+12.3s`, `+3m12s`, `-2h5m`, `+1d3h`. */
export function formatDelta(milliseconds: number): string {
  const sign = milliseconds < 0 ? '-' : '+';
  const value = Math.abs(milliseconds);
  if (value < 1000) return `${sign}${Math.round(value)}ms`;
  if (value < 60_000) return `${sign}${(value / 1000).toFixed(1)}s`;
  const seconds = Math.round(value / 1000);
  if (seconds < 3600) return `${sign}${Math.floor(seconds / 60)}m${seconds % 60}s`;
  if (seconds < 86_400) return `${sign}${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m`;
  return `${sign}${Math.floor(seconds / 86_400)}d${Math.floor((seconds % 86_400) / 3600)}h`;
}

/**
 * A run (lineage) id short enough for a column: its first 8 characters, which tell the runs of one
 * location apart (a lineage id is a random UUID). `--run` accepts this prefix.
 */
export function shortRunId(lineageId: string): string {
  return lineageId.slice(0, 8);
}

/**
 * A checkpoint id short enough for a column: the random part of a generated id
 * (`3f9a2b1c` of `20261121T093000123-3f9a2b1c`), which the CLI accepts as a reference; other ids whole.
 */
export function shortCheckpointId(id: string): string {
  return /^\d{8}T\d{9}-([0-9a-f]{8})$/.exec(id)?.[1] ?? id;
}

/** A control character as text a terminal shows and does not act on: `\x1b`, `\x9b`. */
function escapedControl(code: number): string {
  return `\\x${code.toString(16).padStart(2, '0')}`;
}

/**
 * Text safe to write to a terminal: every C0 and C1 control character (ESC, CSI, BEL, CR, DEL…) is
 * shown escaped (`\x1b`) instead of acting, so a checkpoint's stored strings (a tampered file's
 * trigger, a model's output) cannot move the cursor, clear the screen or retitle the window. Line
 * feeds and tabs stay unless `keepLayout` is false (a TUI cell, where they would break the layout).
 */
export function printable(text: string, keepLayout = true): string {
  return escapeControls(text, escapedControl, keepLayout);
}
