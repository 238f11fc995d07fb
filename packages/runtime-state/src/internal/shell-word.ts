/** Text as one POSIX shell word: quoted when it holds anything a shell would split or expand. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./#-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
