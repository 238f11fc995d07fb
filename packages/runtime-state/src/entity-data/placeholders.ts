/** A `{name}` placeholder in a template (task descriptions, expected outputs, agent goals...). */
export const placeholderPattern = /\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;

/**
 * A value as a filled placeholder shows it: a string as it is, a number, boolean or BigInt as text, a
 * date in ISO form, nothing for `null` and `undefined`, anything else as JSON. One rule for the
 * runtime filling a prompt and the CLI showing a task as the run used it.
 */
export function placeholderText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** The `{placeholder}` names a template uses, in order of first use. */
export function findPlaceholders(template: string): string[] {
  const names = new Set<string>();
  for (const match of template.matchAll(placeholderPattern)) names.add(match[1]!);
  return [...names];
}
