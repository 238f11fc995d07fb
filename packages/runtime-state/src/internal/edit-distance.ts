/** Edits (insert, delete, replace, swap two neighbours) between `a` and `b`. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The name of `known` closest to `word` (case ignored) within `maxDistance` edits, the first of them
 * on a tie, or `undefined`: what a "did you mean" names. Two edits catch a dropped, doubled or
 * swapped letter without pointing a word at an unrelated short name.
 */
export function nearestName(word: string, known: readonly string[], maxDistance = 2): string | undefined {
  let nearest: string | undefined;
  let nearestDistance = maxDistance + 1;
  for (const name of known) {
    const distance = editDistance(word.toLowerCase(), name.toLowerCase());
    if (distance < nearestDistance) {
      nearest = name;
      nearestDistance = distance;
    }
  }
  return nearest;
}
