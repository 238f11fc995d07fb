/**
 * True when `CREWLINE_DEBUG` asks for debug output (any value but empty and `0`). The one place it is
 * read: the error boundary adds stacks with it, the config loader says why its cache is not used.
 */
export function debugEnabled(env: Readonly<Record<string, string | undefined>>): boolean {
  const value = env.CREWLINE_DEBUG;
  return value !== undefined && value !== '' && value !== '0';
}
