// What share of a checkpoint's cost is secret redaction (issue "The cost a run pays": ≤ 10%),
// counted by instrumenting, not read off a sampled profile: redaction-timing-hooks.mjs wraps the
// redaction entry points with timers, and this script times the checkpoint work around them —
// `RuntimeState.recordEvent` (each event redacted into the run's history) and what each checkpoint
// costs the run as checkpoint-timing.ts charges it (taken in its event: snapshot, redaction,
// document; plus its share of the provider call that stored it, alone or in a group) — over the
// whole runs of checkpoint-growth.ts ('*' on SqliteProvider). It also counts, without any
// clock, the strings the pattern scan reads and their characters: each new string is scanned once,
// so what is scanned stays near the text the run produced however many checkpoints hold it.
//
//   node --conditions=@crewline/source --import tsx bench/src/cost/redaction-share.ts \
//     [--scenario crew,flow] [--tasks 500,50] [--rounds 3] [--report PATH]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

register('./redaction-timing-hooks.mjs', import.meta.url);

interface RedactionTally {
  depth: number;
  ms: number;
  calls: number;
  scans: number;
  scannedCharacters: number;
}

/** One scenario's run: checkpoint work and the redaction inside it. */
export interface RedactionShare {
  scenario: 'crew' | 'flow';
  tasks: number;
  checkpoints: number;
  events: number;
  /** Time in `recordEvent` (outermost calls) and the checkpoints' own cost (checkpoint-timing.ts), in ms. */
  checkpointMs: number;
  /** Time in the redaction entry points inside that work, in ms. */
  redactionMs: number;
  /**
   * Each checkpoint's own share: redaction over work since the previous checkpoint was written (the
   * events recorded in between and this write). Their median is not swayed by the few writes that
   * wait seconds for a busy disk, which weigh on the totals.
   */
  shares: number[];
  /** Strings the pattern scan read, and their characters (the clock-free count). */
  scans: number;
  scannedCharacters: number;
  finalBytes: number;
}

// Loaded after the hooks are registered, so that the runtime sees the wrapped redaction.
const { RuntimeState } = await import('@crewline/runtime-state');
const { SqliteProvider } = await import('@crewline/provider-sqlite');
const { measureGrowth } = await import('../checkpoint-growth.js');
const { timeCheckpoints } = await import('./checkpoint-timing.js');
const tally = (): RedactionTally =>
  (globalThis as Record<symbol, RedactionTally | undefined>)[Symbol.for('crewline.bench.redaction')] ?? {
    depth: 0,
    ms: 0,
    calls: 0,
    scans: 0,
    scannedCharacters: 0,
  };

/** Runs `scenario` once and splits its checkpoint work into redaction and the rest. */
export async function measureRedactionShare(
  scenario: 'crew' | 'flow',
  tasks: number,
): Promise<RedactionShare> {
  const prototype = RuntimeState.prototype;
  const originals = {
    recordEvent: prototype.recordEvent,
    writeCheckpointSync: prototype.writeCheckpointSync,
    writeCheckpoint: prototype.writeCheckpoint,
  };
  let depth = 0;
  let events = 0;
  // Since the last checkpoint was taken: the time spent recording events, and the redaction in it.
  let eventWork = 0;
  let eventRedaction = 0;
  /** Per checkpoint taken, in order: the events recorded before it and the redaction of both. */
  const taken: { eventWork: number; redaction: number }[] = [];
  const scansBefore = { scans: tally().scans, characters: tally().scannedCharacters };
  // Outermost calls only: a checkpoint taken from inside an event's recording counts once.
  const timed = <A extends unknown[], R>(
    original: (this: InstanceType<typeof RuntimeState>, ...parameters: A) => R,
    takesCheckpoint: boolean,
  ) =>
    function (this: InstanceType<typeof RuntimeState>, ...parameters: A): R {
      if (depth > 0) return original.apply(this, parameters);
      depth += 1;
      const redactionBefore = tally().ms;
      const started = performance.now();
      try {
        return original.apply(this, parameters);
      } finally {
        const work = performance.now() - started;
        const redaction = tally().ms - redactionBefore;
        if (takesCheckpoint) {
          // Its work (snapshot, redaction, the write or its queueing, and its share of the commit
          // that stored it) is what checkpoint-timing.ts charges it; the redaction is counted here.
          taken.push({ eventWork, redaction: eventRedaction + redaction });
          eventWork = 0;
          eventRedaction = 0;
        } else {
          eventWork += work;
          eventRedaction += redaction;
        }
        depth -= 1;
      }
    };
  prototype.recordEvent = timed(
    function (this: InstanceType<typeof RuntimeState>, ...parameters) {
      events += 1;
      return originals.recordEvent.apply(this, parameters);
    } as typeof originals.recordEvent,
    false,
  );
  // Beneath these, timeCheckpoints charges each checkpoint what the run paid for it: taken in its
  // event (`writeCheckpointSync`, as SqliteProvider commits by default, or `writeCheckpoint` when
  // the provider commits in groups) plus its share of the provider call that stored it.
  const timing = timeCheckpoints(SqliteProvider.prototype);
  prototype.writeCheckpointSync = timed(prototype.writeCheckpointSync, true);
  prototype.writeCheckpoint = timed(prototype.writeCheckpoint, true);
  try {
    const growth = await measureGrowth(scenario, tasks);
    const { endToEndMs } = timing.times();
    const checkpoints = Math.min(taken.length, endToEndMs.length);
    let checkpointMs = 0;
    let redactionMs = 0;
    const shares: number[] = [];
    for (let index = 0; index < checkpoints; index += 1) {
      const work = taken[index]!.eventWork + endToEndMs[index]!;
      checkpointMs += work;
      redactionMs += taken[index]!.redaction;
      shares.push(taken[index]!.redaction / work);
    }
    return {
      scenario,
      tasks,
      checkpoints: growth.checkpoints,
      events,
      checkpointMs,
      redactionMs,
      shares,
      scans: tally().scans - scansBefore.scans,
      scannedCharacters: tally().scannedCharacters - scansBefore.characters,
      finalBytes: growth.finalBytes,
    };
  } finally {
    prototype.recordEvent = originals.recordEvent;
    prototype.writeCheckpointSync = originals.writeCheckpointSync;
    prototype.writeCheckpoint = originals.writeCheckpoint;
    timing.stop();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'crew,flow' },
    tasks: { type: 'string', default: '500,50' },
    rounds: { type: 'string', default: '3' },
    report: { type: 'string' },
    child: { type: 'string' },
  },
});

/**
 * One run in a child process of its own, as a user's run starts: the redaction caches (scanned
 * texts, key names) and the JIT begin empty. In one process, the runs after the first would find
 * the same deterministic texts already scanned.
 */
function measureInChild(scenario: 'crew' | 'flow', tasks: number): RedactionShare {
  const output = execFileSync(
    process.execPath,
    [
      '--conditions=@crewline/source',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--child',
      `${scenario}:${tasks}`,
    ],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return JSON.parse(output.trim().split('\n').at(-1)!) as RedactionShare;
}

if (values.child !== undefined) {
  const [scenario, tasks] = values.child.split(':');
  console.log(JSON.stringify(await measureRedactionShare(scenario as 'crew' | 'flow', Number(tasks))));
  process.exit(0);
}
const loadBefore = loadavg()[0]!;
const rows: string[] = [];
let largestShare = 0;
for (const tasks of values.tasks!.split(',').map(Number)) {
  for (const scenario of values.scenario!.split(',') as ('crew' | 'flow')[]) {
    const runs: RedactionShare[] = [];
    for (let round = 0; round < Number(values.rounds); round += 1) runs.push(measureInChild(scenario, tasks));
    const totals = runs.map((run) => run.redactionMs / run.checkpointMs);
    const perCheckpoint = runs.map((run) => median(run.shares));
    const share = Math.max(median(totals), median(perCheckpoint));
    largestShare = Math.max(largestShare, share);
    const run = runs[0]!;
    const percent = (value: number) => `${(100 * value).toFixed(1)} %`;
    rows.push(
      `| ${scenario}, ${tasks} tasks | ${run.checkpoints} | ${median(runs.map((each) => each.checkpointMs / each.checkpoints)).toFixed(3)} ms | ${median(runs.map((each) => each.redactionMs / each.checkpoints)).toFixed(4)} ms | ${percent(median(totals))} (${totals.map(percent).join(', ')}) | ${percent(median(perCheckpoint))} (${perCheckpoint.map(percent).join(', ')}) | ${run.scans} | ${(run.scannedCharacters / 1e6).toFixed(2)} M | ${(run.finalBytes / 1e6).toFixed(2)} MB | ${(run.scannedCharacters / run.finalBytes).toFixed(2)}× |`,
    );
    console.error(rows.at(-1));
  }
}
const report = [
  '# Redaction share of checkpoint time',
  '',
  `Secret redaction against the whole checkpoint work of a run, counted by instrumenting (\`bench/src/cost/redaction-share.ts\`): the redaction entry points (\`redactSecrets\`, \`redactAndSettle\`) timed inside \`RuntimeState.recordEvent\` and inside taking each checkpoint, against the time spent recording events plus what each checkpoint cost the run (\`bench/src/cost/checkpoint-timing.ts\`: taken in its event, snapshot and redaction included, plus its share of the provider call that stored it, SqliteProvider committing a run's automatic checkpoints in groups), summed over every event and checkpoint of the run. Runs of \`checkpoint-growth.ts\`: '*' on SqliteProvider, offline model without latency, one tool call per task; "crew" is one crew, "flow" a flow of 10 methods each running a crew of a tenth of the tasks and keeping its outputs in the state. ${values.rounds} runs per row, each in a fresh process (a user's run starts with empty redaction caches), medians (each run's share in brackets). Machine: ${cpus().length} CPUs, 1-minute load average ${loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after (Node ${process.version}).`,
  '',
  '| run | checkpoints | checkpoint work per checkpoint (mean) | redaction per checkpoint (mean) | redaction share of all the work | median share per checkpoint | strings scanned | characters scanned | final checkpoint | scanned / final |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
  `Target (issue "The cost a run pays"): redaction ≤ 10% of checkpoint time — ${largestShare <= 0.1 ? 'met' : 'not met'} (largest share, of either kind, ${(100 * largestShare).toFixed(1)} %). The share of all the work weighs in the writes that waited for a busy disk (a WAL checkpoint's fsync), which a loaded machine makes long; each checkpoint's own share, and its median, does not. The last three columns count without a clock: the strings the pattern scan read (each new string once; a string met again is looked up by content, a settled value is not visited again; ids and timestamps are checked against the registered credential values only, not scanned) and their characters, against the size of the run's final checkpoint.`,
].join('\n');
console.log(report);
const reportPath =
  values.report ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'results', 'redaction-share.md');
mkdirSync(dirname(reportPath), { recursive: true });
writeFileSync(reportPath, `${report}\n`);
