/** A `{name}` placeholder in a template (task descriptions, expected outputs, agent goals...). */
export const placeholderPattern = /\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;

/** The `{placeholder}` names a template uses, in order of first use. */
export function findPlaceholders(template: string): string[] {
  const names = new Set<string>();
  for (const match of template.matchAll(placeholderPattern)) names.add(match[1]!);
  return [...names];
}
