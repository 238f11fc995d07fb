/** An error as the browser's status line and panels show it: its message without the `[code]` prefix. */
export function errorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^\[[^\]]+\]\s*/, '');
}
