import { createValueCodec, type ValueClassEntry, type ValueCodec } from '@crewline/runtime-state';
import { CrewOutput } from '../crew/crew-output.js';
import { type ProjectRegistry, projectRegistry } from '../project-config/project-config.js';
import { TaskOutput } from '../task/task-output.js';

/** The runtime's own result classes: a flow method returning `crew.kickoff()` gets a CrewOutput back. */
const builtInClasses: readonly ValueClassEntry[] = [
  { class: CrewOutput, name: 'crewline.CrewOutput' },
  { class: TaskOutput, name: 'crewline.TaskOutput' },
];

const codecs = new WeakMap<ProjectRegistry, { classCount: number; codec: ValueCodec }>();

/**
 * The codec for the values of a run (flow state, method outputs, task outputs, kickoff inputs): the
 * runtime's result classes and the `classes` the project registered. Rebuilt when classes are added.
 */
export function runValueCodec(registry: ProjectRegistry = projectRegistry()): ValueCodec {
  const cached = codecs.get(registry);
  if (cached && cached.classCount === registry.classes.length) return cached.codec;
  const codec = createValueCodec({ classes: [...builtInClasses, ...registry.classes] });
  codecs.set(registry, { classCount: registry.classes.length, codec });
  return codec;
}
