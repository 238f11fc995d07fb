// Reads a `node --cpu-prof` profile and prints where checkpointing time goes: samples whose stack
// holds a checkpointing frame (the run's snapshot, redaction, document text, provider writes), and
// among those the share spent in secret redaction. Frames are matched by function name.
//   node --import tsx bench/src/cost/profile-shares.ts PROFILE.cpuprofile
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const checkpointing =
  /^(?:writeCheckpointSync|writeCheckpoint|#prepare|snapshot|createCheckpointWrite|checkpointText|writeFileAtomic|writeFileAtomicSync|writeSync|write|writeAutomaticCheckpoint|recordEvent|drain|#drain|persistPending|snapshotEntity)$/;
const redaction =
  /^(?:redactSecrets|markRedacted|redact|redactSecretsInText|redactSecretValues|redactAssignments|redactText)$/;

const profile = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Profile;
const parent = new Map<number, number>();
const byId = new Map<number, ProfileNode>();
for (const node of profile.nodes) {
  byId.set(node.id, node);
  for (const child of node.children ?? []) parent.set(child, node.id);
}
const classes = new Map<number, { checkpoint: boolean; redaction: boolean; top: string }>();
function classify(id: number) {
  const known = classes.get(id);
  if (known) return known;
  let checkpoint = false;
  let redacted = false;
  const self = byId.get(id)!.callFrame;
  const top = `${self.functionName || '(anonymous)'} ${self.url.split('/').slice(-2).join('/')}:${self.lineNumber + 1}`;
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at)!.callFrame;
    if (frame.url.includes('crewline') || frame.url.includes('/packages/')) {
      if (checkpointing.test(frame.functionName)) checkpoint = true;
      if (redaction.test(frame.functionName)) redacted = true;
    }
  }
  const result = { checkpoint, redaction: redacted, top };
  classes.set(id, result);
  return result;
}
let total = 0;
let inCheckpoint = 0;
let inRedaction = 0;
const tops = new Map<string, number>();
for (let index = 0; index < profile.samples.length; index += 1) {
  const delta = profile.timeDeltas[index] ?? 0;
  const node = byId.get(profile.samples[index]!)!;
  if (node.callFrame.functionName === '(idle)') continue;
  total += delta;
  const { checkpoint, redaction: redacted, top } = classify(node.id);
  if (checkpoint || redacted) inCheckpoint += delta;
  if (redacted) {
    inRedaction += delta;
    tops.set(top, (tops.get(top) ?? 0) + delta);
  }
}
const ms = (value: number) => (value / 1000).toFixed(0);
console.log(
  `busy ${ms(total)} ms; checkpointing ${ms(inCheckpoint)} ms; redaction ${ms(inRedaction)} ms = ${((100 * inRedaction) / Math.max(inCheckpoint, 1)).toFixed(1)} % of checkpointing`,
);
for (const [top, time] of [...tops].sort((a, b) => b[1] - a[1]).slice(0, 6))
  console.log(`  ${ms(time).padStart(5)} ms  ${top}`);
