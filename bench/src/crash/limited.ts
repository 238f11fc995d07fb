/** Runs `jobs` with at most `limit` at a time; results in job order. */
export async function limited<T>(limit: number, jobs: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, limit) }, async () => {
      while (next < jobs.length) {
        const index = next;
        next += 1;
        results[index] = await jobs[index]!();
      }
    }),
  );
  return results;
}
