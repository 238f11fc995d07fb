/** `1 model call`, `2 model calls`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

export function capitalize(text: string): string {
  return text.length === 0 ? text : text[0]!.toUpperCase() + text.slice(1);
}

/** The first line of a text, cut to 160 characters; `(none)` for no text. */
export function firstLine(text: string | undefined): string {
  if (text === undefined) return '(none)';
  const line = text.split('\n')[0] ?? '';
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

/** Every line indented by two spaces. */
export function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
