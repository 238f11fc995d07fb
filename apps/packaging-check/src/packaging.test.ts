import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { newerEventsBesideRuntime, twoCopiesShareOneBus } from './scenarios/event-bus.js';
import { flowConfigLoads } from './scenarios/flow-config.js';
import { publint, typesResolve } from './scenarios/linters.js';
import { registeredModelPrefix } from './scenarios/model-prefix.js';
import { readmeExampleAndCli } from './scenarios/readme-example.js';
import { tarballContents } from './scenarios/tarball-contents.js';
import { thirdPartyProvider } from './scenarios/third-party-provider.js';
import { workerTakesQueuedRun } from './scenarios/worker.js';
import { type CheckContext, prepareContext, removeContext, seconds } from './support/context.js';

/**
 * One function per scenario, each given the packed tarballs and a place outside the workspace (and
 * vitest's test context, to skip); a new scenario is one more line here.
 */
const scenarios: [name: string, scenario: (context: CheckContext, test: TestContext) => Promise<void>][] = [
  [
    'tarballs hold LICENSE, metadata, every export target and source-map source',
    async (context) => {
      expect(await tarballContents(context)).toEqual([]);
    },
  ],
  [
    'publint finds nothing in any tarball',
    async (context) => {
      expect(await publint(context)).toEqual([]);
    },
  ],
  [
    'types resolve in every tarball (are the types wrong, ESM-only profile)',
    async (context) => {
      expect(await typesResolve(context)).toEqual([]);
    },
  ],
  ['the README example, the CLI and the explorer work in a fresh npm project', readmeExampleAndCli],
  [
    "the flow-state page's Flow in crewline.config.ts: the installed CLI lists its state and re-runs a step",
    flowConfigLoads,
  ],
  [
    'a third-party provider in crewline.config.ts: a crew checkpoints to it, the CLI lists, shows and resumes it',
    thirdPartyProvider,
  ],
  [
    'a model prefix in crewline.config.ts: resume and fork rebuild the model through it',
    registeredModelPrefix,
  ],
  [
    'a newer @crewline/events beside the runtime: one copy, every event reaches the handlers',
    newerEventsBesideRuntime,
  ],
  ['two copies of @crewline/events share one bus and warn once', twoCopiesShareOneBus],
  [
    'the worker on Postgres: crewline runs enqueue, crewline worker takes the run, runs list and show print it',
    workerTakesQueuedRun,
  ],
];

let context: CheckContext | undefined;
const started = Date.now();

beforeAll(async () => {
  context = await prepareContext();
});

afterAll(async () => {
  if (context) {
    context.report(`total ${seconds(Date.now() - started)}`);
    process.stdout.write(`packaging check:\n  ${context.reportLines.join('\n  ')}\n`);
  }
  await removeContext(context);
});

describe('packages as users install them', () => {
  for (const [name, scenario] of scenarios) {
    it(name, async (test) => {
      const scenarioStarted = Date.now();
      await scenario(context!, test);
      context!.report(`${name}: ${seconds(Date.now() - scenarioStarted)}`);
    });
  }
});
