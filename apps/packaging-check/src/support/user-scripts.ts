// What the scenarios run and read in a user project: the crew script and the checkpoint ids printed by
// `crewline checkpoint list`, written once so that scenarios differ only in what they check.

/** The published packages a user installs to run a crew and the `crewline` command. */
export const runtimeAndCli = [
  '@crewline/events',
  '@crewline/runtime-state',
  '@crewline/provider-json',
  '@crewline/runtime',
  '@crewline/cli',
];

/** Every distinct checkpoint id in `output` (a listing, an info page), in the order they appear. */
export function checkpointIds(output: string): string[] {
  return [...new Set([...output.matchAll(/\b(\d{8}T\d{9}-[0-9a-f]{8})\b/g)].map((match) => match[1]!))];
}

export interface TwoTaskScriptOptions {
  /** What the script names from `@crewline/runtime` besides Agent, Crew and Task. */
  imports: string[];
  /** Statements after the imports (the config is imported as `config`). */
  setup: string;
  /** The writer's model id. */
  llm: string;
  crewName: string;
  /** The crew's `checkpoint` option, as source text. */
  checkpoint: string;
  /** Statements after the kickoff (its result is `result`). */
  after: string;
}

/**
 * A user's run.ts: one writer, two tasks ("Draft {topic}", "Polish the draft") on topic "tides", a
 * checkpoint after each; `crewline.config.ts` imported beside it.
 */
export function twoTaskScript(options: TwoTaskScriptOptions): string {
  const names = ['Agent', 'Crew', ...options.imports, 'Task'].sort((left, right) =>
    left.localeCompare(right),
  );
  return `import { ${names.join(', ')} } from '@crewline/runtime';
import config from './crewline.config.ts';

${options.setup}
const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Plain', llm: ${JSON.stringify(options.llm)} });
const crew = new Crew({
  name: ${JSON.stringify(options.crewName)},
  agents: [writer],
  tasks: [
    new Task({ description: 'Draft {topic}', expectedOutput: 'A draft', agent: writer }),
    new Task({ description: 'Polish the draft', expectedOutput: 'A paragraph', agent: writer }),
  ],
  checkpoint: ${options.checkpoint},
});
const result = await crew.kickoff({ inputs: { topic: 'tides' } });
${options.after}
`;
}
