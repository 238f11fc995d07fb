import { CrewlineError } from '@crewline/events';
import { placeholderPattern, placeholderText } from '@crewline/runtime-state/internal';

/**
 * Fills `{name}` placeholders from `inputs`. Without inputs the template is returned as written (so a
 * crew without inputs may mention braces freely); with inputs, a placeholder that has no value is an
 * error naming it, because a silently unfilled prompt wastes a paid model call.
 */
export function interpolate(
  template: string,
  inputs: Readonly<Record<string, unknown>>,
  owner: string,
): string {
  if (Object.keys(inputs).length === 0) return template;
  return template.replace(placeholderPattern, (_whole, name: string) => {
    if (!Object.hasOwn(inputs, name)) {
      throw new CrewlineError(
        'runtime',
        'invalid_argument',
        `${owner} uses {${name}} but the inputs have no "${name}"; pass inputs: { ${name}: ... } to kickoff`,
      );
    }
    return placeholderText(inputs[name]);
  });
}
