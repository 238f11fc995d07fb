import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrewlineProcess } from '../test-support/subprocess.js';

// The project lives under this package's node_modules so that its config resolves
// `@crewline/runtime` and `@crewline/worker` as a user's project resolves its installed copies.
const projects = new URL('../../node_modules/.crewline-test/', import.meta.url).pathname;

// `report` as apps/worker-example registers it; `sized` reads an input in its factory; `picky`
// refuses inputs itself; `opaque` spreads them (nothing can be said of its inputs).
const config = `import { CrewlineError } from '@crewline/events';
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { defineRuns } from '@crewline/worker';

const model = offlineModel();
const crewOf = (name, topic = '{topic}') => {
  const planner = new Agent({ role: 'Planner', goal: 'Outline a report on ' + topic, backstory: 'Brief', llm: model });
  const outline = new Task({ description: 'Outline a report on ' + topic, expectedOutput: 'Five headings', agent: planner });
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

  it('refuses an input the crew does not use, naming the one it probably is (exit 2)', async () => {
    const result = await enqueue('report', '--input', 'topci=x');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'crewline: input "topci" is not one crew "report" of crewline.config.ts uses (it uses: topic); did you mean --input topic=…?; nothing was queued\n',
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

  it('lets through what the crew uses, what its factory reads, no inputs, and what it cannot judge', async () => {
    for (const args of [
      ['report', '--input', 'topic=tides'],
      ['report'],
      ['sized', '--input', 'topic=tides', '--input', 'pages:=1'],
      ['opaque', '--input', 'anything=1'],
      // Not registered here: the warning of an unknown name, not a refusal of its inputs.
      ['elsewhere', '--input', 'topci=x'],
    ]) {
      const result = await enqueue(...args);
      expect(result.stderr, args.join(' ')).not.toMatch(/nothing was queued/);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(7);
    }
  });
});
