import { placeholderPattern } from '@crewline/runtime-state/internal';

/**
 * A value as a template shows it, as the runtime fills a prompt (`interpolate` in the runtime's
 * templating): a string as it is, a date in ISO form, anything else not a number or a boolean as JSON.
 */
function shownValue(value: unknown): string {
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

/**
 * `template` with each `{name}` that `inputs` hold filled in, as the run's prompt had it; a
 * placeholder that nothing gave a value stays as written (the views list it as "without a value").
 */
export function filledTemplate(template: string, inputs: Readonly<Record<string, unknown>>): string {
  return template.replace(placeholderPattern, (whole, name: string) =>
    Object.hasOwn(inputs, name) ? shownValue(inputs[name]) : whole,
  );
}
