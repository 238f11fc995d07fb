import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrewlineProcess } from '../test-support/subprocess.js';
import { checkEnqueue } from './runs-enqueue.js';

// The project lives under this package's node_modules so that its config resolves
// `@crewline/runtime` and `@crewline/worker` as a user's project resolves its installed copies.
const projects = new URL('../../node_modules/.crewline-test/', import.meta.url).pathname;

// `report` as apps/worker-example registers it; `sized` reads an input in its factory; `picky`
// refuses inputs itself; `opaque` spreads them; `tested` only tests whether it has one (a review found
// it refused); `notify` reads one only later, in a task callback (refused too).
const config = `import { CrewlineError } from '@crewline/events';
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { defineRuns } from '@crewline/worker';

const model = offlineModel();
const crewOf = (name, topic = '{topic}', callback) => {
  const planner = new Agent({ role: 'Planner', goal: 'Outline a report on ' + topic, backstory: 'Brief', llm: model });
  const outline = new Task({ description: 'Outline a report on ' + topic, expectedOutput: 'Five headings', agent: planner, ...(callback ? { callback } : {}) });
  return new Crew({ name, agents: [planner], tasks: [outline] });
};

export default {
  runs: defineRuns({
    crews: {
      report: () => crewOf('report'),
      sized: (run) => crewOf(run.inputs.pages === 1 ? 'short' : 'long'),
      picky: (run) => {
        if (run.inputs.topic === 'secrets')
          throw new CrewlineError('app', 'invalid_argument', 'topic "secrets" is not allowed');
        return crewOf('picky');
      },
      opaque: (run) => crewOf('opaque', JSON.stringify({ ...run.inputs })),
      tested: (run) => crewOf(Object.hasOwn(run.inputs, 'short') || 'long' in run.inputs ? 'short' : 'long'),
      notify: (run) => crewOf('notify', undefined, () => console.log('notify', run.inputs.channel)),
    },
  }),
};
`;

describe('crewline runs enqueue checks inputs against the crew registered here', () => {
  const project = join(projects, `runs-enqueue-${process.pid}`);
  // Nothing listens there: a refusal comes before the queue is opened, an accepted run fails to
  // reach it (exit code 7), past the check.
  const enqueue = (...args: string[]) =>
    runCrewlineProcess(['runs', 'enqueue', ...args], {
      cwd: project,
      env: { CREWLINE_WORKER_LOCATION: 'postgres://nobody@127.0.0.1:9/none' },
    });

  beforeAll(async () => {
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'crewline.config.ts'), config);
  });
  afterAll(() => rm(project, { recursive: true, force: true }));

  it('refuses a misspelled input, as the placeholder it leaves without a value, naming both (exit 2)', async () => {
    const result = await enqueue('report', '--input', 'topci=x');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'crewline: crew "report" of crewline.config.ts uses {topic} but the inputs have no "topic"; did you mean --input topic=… instead of --input topci=…?; nothing was queued\n',
    );
  });

  it('refuses inputs without a placeholder the crew uses (exit 2)', async () => {
    const result = await enqueue('sized', '--input', 'pages:=1');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'crewline: crew "sized" of crewline.config.ts uses {topic} but the inputs have no "topic"; add --input topic=…; nothing was queued\n',
    );
  });

  it("says the factory's own refusal of the inputs (exit 2)", async () => {
    const result = await enqueue('picky', '--input', 'topic=secrets');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'crew "picky" of crewline.config.ts refuses these inputs: topic "secrets" is not allowed; nothing was queued',
    );
  });

  // Nine processes, each loading the config: on a loaded machine that takes more than 30 s.
  it('lets through what the crew uses, what its factory reads, no inputs, and what it cannot judge', async () => {
    for (const args of [
      ['report', '--input', 'topic=tides'],
      ['report'],
      ['sized', '--input', 'topic=tides', '--input', 'pages:=1'],
      ['opaque', '--input', 'anything=1'],
      // Before: refused, as if the factory ignored what it only tests with Object.hasOwn or `in`.
      ['tested', '--input', 'topic=tides', '--input', 'short:=true'],
      ['tested', '--input', 'topic=tides', '--input', 'long:=true'],
      // Before: refused, though the task callback reads it; now queued with a warning (below).
      ['notify', '--input', 'topic=tides', '--input', 'channel=#ops'],
      // Unused and not a typo of anything missing: warned of, not refused.
      ['report', '--input', 'topic=tides', '--input', 'tone=dry'],
      // Not registered here: the warning of an unknown name, not a refusal of its inputs.
      ['elsewhere', '--input', 'topci=x'],
    ]) {
      const result = await enqueue(...args);
      expect(result.stderr, args.join(' ')).not.toMatch(/nothing was queued/);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(7);
    }
  }, 120_000);

  it('warns of inputs nothing seen here uses, naming the placeholder one is probably a typo of', async () => {
    const callback = await checkEnqueue('notify', { topic: 'tides', channel: '#ops' }, project, 'crewline');
    expect(callback).toBe(
      'crewline warn [runs] input "channel" is no placeholder of crew "notify" of crewline.config.ts and its factory does not read it (placeholders: {topic}); a task callback or a tool may read it, and the runtime ignores an input nothing uses, so the run is queued: check the spelling, or cancel it with crewline runs cancel',
    );
    const typos = await checkEnqueue(
      'report',
      { topic: 'tides', topics: 'x', tone: 'dry' },
      project,
      'crewline',
    );
    expect(typos).toContain(
      'crewline warn [runs] inputs "topics" (did you mean {topic}?), "tone" are no placeholders of crew "report" of crewline.config.ts and its factory does not read them (placeholders: {topic});',
    );
    // Read, tested or listed by the factory, or every key a placeholder: nothing to say.
    expect(await checkEnqueue('sized', { topic: 'tides', pages: 1 }, project, 'crewline')).toBeUndefined();
    expect(
      await checkEnqueue('tested', { topic: 'tides', short: true }, project, 'crewline'),
    ).toBeUndefined();
    expect(await checkEnqueue('opaque', { anything: 1 }, project, 'crewline')).toBeUndefined();
    expect(await checkEnqueue('report', { topic: 'tides' }, project, 'crewline')).toBeUndefined();
  });

  // The trial: `runs enqueue report` without --input was queued silently, and the worker paid for
  // two model calls on the literal "{topic}". By design not refused (a crew may mean no inputs), but said.
  it('warns of placeholders left without a value when no --input is given, naming them and the flag', async () => {
    expect(await checkEnqueue('report', {}, project, 'crewline')).toBe(
      'crewline warn [runs] crew "report" of crewline.config.ts uses {topic} and no --input gives it a value: with no inputs at all the runtime leaves every placeholder as written, so the model reads "{topic}" literally; pass it with --input topic=…, or cancel the run with crewline runs cancel',
    );
  });
});
