/**
 * Deterministic stand-in for model output: prose of a chosen length from a seeded generator, so
 * every run of a benchmark stores the same bytes and nothing compresses unrealistically well.
 */
const words = (
  'agent analysis answer approach benchmark budget cache checkpoint claim context cost crew data ' +
  'decision detail draft evidence example finding flow forecast goal growth hypothesis impact input ' +
  'insight lineage market measure method metric model note number observation option outcome output ' +
  'pattern plan point priority process question reason recommendation report research result review ' +
  'risk run sample scenario section signal source step strategy summary survey task team tool topic ' +
  'trend value version workflow adoption baseline capacity channel constraint customer demand latency ' +
  'margin pipeline pricing quality segment supplier throughput usage vendor volume'
).split(' ');

/** A small, fast, seeded pseudo-random generator (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** About `bytes` characters of sentence-like text (ASCII), different for each seed. */
export function prose(seed: number, bytes: number): string {
  const random = seededRandom(seed);
  const parts: string[] = [];
  let length = 0;
  let sentence = 0;
  while (length < bytes) {
    const word = words[Math.floor(random() * words.length)]!;
    const first = sentence === 0;
    const text = first ? word[0]!.toUpperCase() + word.slice(1) : word;
    sentence += 1;
    const end = sentence > 8 && random() < 0.2;
    const piece = `${text}${end ? '.' : random() < 0.08 ? ',' : ''}`;
    if (end) sentence = 0;
    parts.push(piece);
    length += piece.length + 1;
  }
  return parts.join(' ').slice(0, bytes);
}
