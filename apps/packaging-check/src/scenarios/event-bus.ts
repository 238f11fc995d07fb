import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runOrThrow } from '../support/commands.js';
import type { CheckContext } from '../support/context.js';
import type { UserProject } from '../support/project.js';
import { extract, repackWithVersion } from '../support/tarballs.js';

// A user's script: a handler on the bus of the project's own @crewline/events, a crew run by the
// runtime (which imports @crewline/events from wherever it resolves it), then what the handler saw
// beside what the run recorded in its last checkpoint.
const userScript = `import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { eventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';

const seen = [];
eventBus.onAny((_source, event) => { seen.push(event.type); });

const llm = offlineModel();
const researcher = new Agent({ role: 'Researcher', goal: 'Research {topic}', backstory: 'Expert', llm });
const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Expert', llm });
const crew = new Crew({
  agents: [researcher, writer],
  tasks: [
    new Task({ description: 'Research {topic}', expectedOutput: 'bullets', agent: researcher }),
    new Task({ description: 'Write a summary', expectedOutput: 'paragraph', agent: writer }),
  ],
  checkpoint: true,
});
await crew.kickoff({ inputs: { topic: 'AI' } });

const listed = await new JsonProvider().list('./.checkpoints');
const last = JSON.parse(readFileSync(listed.at(-1).reference, 'utf8'));
// The @crewline/events the runtime itself resolves, and whether its bus is the user's.
const fromRuntime = createRequire(createRequire(import.meta.url).resolve('@crewline/runtime'));
const runtimeEvents = await import(pathToFileURL(fromRuntime.resolve('@crewline/events')).href);
process.stdout.write(JSON.stringify({
  seen,
  recorded: last.events.map((event) => event.type),
  sameBus: runtimeEvents.eventBus === eventBus,
  runtimeEventsVersion: JSON.parse(readFileSync(new URL('../package.json', pathToFileURL(fromRuntime.resolve('@crewline/events'))), 'utf8')).version,
}));
`;

interface Observed {
  seen: string[];
  recorded: string[];
  sameBus: boolean;
  runtimeEventsVersion: string;
}

async function runUserScript(project: UserProject): Promise<{ observed: Observed; stderr: string }> {
  await project.write('events.mjs', userScript);
  const result = await project.node(['events.mjs']);
  expect(result.code, result.stderr).toBe(0);
  return { observed: JSON.parse(result.stdout) as Observed, stderr: result.stderr };
}

/** Every event the run recorded reached the user's handler, and the run ended. */
function expectEveryEvent(observed: Observed): void {
  // Checkpoint lifecycle events are emitted for observers but never stored in a run's history.
  const runEvents = observed.seen.filter((type) => !type.startsWith('checkpoint_'));
  expect(observed.recorded.length).toBeGreaterThan(5);
  expect(runEvents.slice(0, observed.recorded.length)).toEqual(observed.recorded);
  expect(runEvents).toContain('crew_kickoff_completed');
  expect(observed.seen).toContain('checkpoint_completed');
}

async function copiesOfEvents(project: UserProject): Promise<string[]> {
  const result = await runOrThrow('find', ['node_modules', '-path', '*/@crewline/events/package.json'], {
    cwd: project.directory,
  });
  return result.stdout.split('\n').filter(Boolean);
}

async function projectWithNewerEvents(context: CheckContext, name: string): Promise<UserProject> {
  const events = context.packed.get('@crewline/events')!;
  const newer = await repackWithVersion(events, bumpMinor(events.version), context.work);
  const project = await context.project(name);
  await project.install([
    newer,
    ...context.tarballs('@crewline/runtime-state', '@crewline/provider-json', '@crewline/runtime'),
  ]);
  return project;
}

/**
 * The project asks for a newer @crewline/events (a minor above the runtime's) beside the runtime:
 * npm installs one copy, and the user's handlers receive every event of the run.
 */
export async function newerEventsBesideRuntime(context: CheckContext): Promise<void> {
  const project = await projectWithNewerEvents(context, 'newer-events');
  context.report(`install size, @crewline/runtime alone: ${await project.installSize()}`);
  expect(await copiesOfEvents(project)).toEqual(['node_modules/@crewline/events/package.json']);
  const { observed, stderr } = await runUserScript(project);
  expect(observed.sameBus).toBe(true);
  expect(observed.runtimeEventsVersion).toBe(bumpMinor(context.packed.get('@crewline/events')!.version));
  expectEveryEvent(observed);
  expect(stderr).toBe('');
}

/**
 * Two copies anyway (the runtime's own older copy nested under it, as an install that cannot dedupe
 * leaves it): they share one bus, the handlers receive every event, and one warning says so.
 */
export async function twoCopiesShareOneBus(context: CheckContext): Promise<void> {
  const project = await projectWithNewerEvents(context, 'two-copies');
  const nested = join(project.directory, 'node_modules/@crewline/runtime/node_modules/@crewline/events');
  await mkdir(nested, { recursive: true });
  await cp(await extract(context.packed.get('@crewline/events')!.tarball, context.work), nested, {
    recursive: true,
  });
  expect(await copiesOfEvents(project)).toHaveLength(2);
  const { observed, stderr } = await runUserScript(project);
  expect(observed.runtimeEventsVersion).toBe(context.packed.get('@crewline/events')!.version);
  expect(observed.sameBus).toBe(true);
  expectEveryEvent(observed);
  const warnings = stderr.split('\n').filter(Boolean);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/^crewline warn \[events\] 2 copies of @crewline\/events are installed/);
}

function bumpMinor(version: string): string {
  const [major, minor] = version.split('.').map(Number);
  return `${major}.${minor! + 1}.0`;
}
