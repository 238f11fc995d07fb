import { placeholderPattern, placeholderText } from '@crewline/runtime-state/internal';

/**
 * `template` with each `{name}` that `inputs` hold filled in, as the run's prompt had it; a
 * placeholder that nothing gave a value stays as written (the views list it as "without a value").
 * Values are shown as the runtime fills a prompt (`placeholderText`).
 */
export function filledTemplate(template: string, inputs: Readonly<Record<string, unknown>>): string {
  return template.replace(placeholderPattern, (whole, name: string) =>
    Object.hasOwn(inputs, name) ? placeholderText(inputs[name]) : whole,
  );
}
