// One hostile checkpoint file, fed through every reader: runtime-state's reference resolution and
// loading (the file, and its directory's latest), JsonProvider's listing, the CLI's `checkpoint
// info` and `list`, and — once loaded — the restore a resume starts with; a sample of loaded files
// is resumed to the end, which writes where the resumed run decides to.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import { Crew, continueFromCheckpoint, Flow } from '@crewline/runtime';
import {
  createProviderRegistry,
  type LoadedCheckpoint,
  loadCheckpoint,
  providerEntryOf,
} from '@crewline/runtime-state';
import { CaseRecorder, entriesOutside, prototypeChanges, snapshotPrototypes } from './case-oracle.js';
import { type CaseResult, outcomeOf, refusalCode } from './case-result.js';
import { isInternalError, runCliQuietly } from './cli-read.js';
import type { JsonMutation, Sandbox } from './json-mutation.js';
import type { Random } from './random-tools.js';
import type { SeedCheckpoint } from './seed-material.js';

export interface JsonCaseSetup {
  index: number;
  mutation: JsonMutation;
  seed: SeedCheckpoint;
  random: Random;
  /** A directory of its own for the case (removed afterwards). */
  root: string;
  /** Resume the checkpoint to the end when it loads. */
  resume: boolean;
  /** Paths that must not exist after the case (the seed runs' deleted locations). */
  forbidden: readonly string[];
}

/** The location sits a few directories down, so that `../` names stay inside the case's directory. */
function sandboxOf(root: string): Sandbox {
  return { root, location: join(root, 'a', 'b', 'c', 'd', 'location') };
}

async function restore(loaded: LoadedCheckpoint, file: string): Promise<unknown> {
  const kind = loaded.document.entities[0]?.kind;
  if (kind === 'flow') return Flow.fromCheckpoint({ restoreFrom: file });
  return Crew.fromCheckpoint({ restoreFrom: file });
}

/** Runs one JSON case; never throws for what it checks. */
export async function runJsonCase(setup: JsonCaseSetup): Promise<CaseResult> {
  const started = performance.now();
  const sandbox = sandboxOf(setup.root);
  const mutated = setup.mutation.mutate(setup.seed, setup.random, sandbox);
  const directory = mutated.standalone ? sandbox.location : join(sandbox.location, setup.seed.branch);
  const file = join(directory, mutated.standalone ? 'saved.json' : setup.seed.fileName);
  mkdirSync(directory, { recursive: true });
  writeFileSync(file, mutated.content);

  const recorder = new CaseRecorder();
  const prototypes = snapshotPrototypes();
  const catalog = createProviderRegistry([providerEntryOf(new JsonProvider())]);
  const loaded = await recorder.attempt('load the file', () => loadCheckpoint(file, catalog));
  await recorder.attempt('load the latest of the location', () => loadCheckpoint(sandbox.location, catalog));
  await recorder.attempt('list the location', () => new JsonProvider().list(sandbox.location));
  for (const argv of [
    ['checkpoint', 'info', file, '--json'],
    ['checkpoint', 'list', sandbox.location],
  ]) {
    const run = await recorder.attempt(`crewline ${argv[1]}`, () => runCliQuietly(argv, setup.root));
    if (run.value && isInternalError(run.value))
      recorder.fail('CLI internal error', `crewline ${argv[1]}`, run.value.stderr.slice(0, 400));
  }
  let resumed = false;
  if (loaded.value) {
    const document = loaded.value;
    await recorder.attempt('restore', () => restore(document, file));
    if (setup.resume) {
      resumed = true;
      await recorder.attempt('resume to the end', () =>
        continueFromCheckpoint({ reference: file, mode: 'resume', providers: catalog }),
      );
    }
  }
  for (const change of prototypeChanges(prototypes))
    recorder.fail('prototype changed', 'the whole case', change);
  for (const path of entriesOutside(setup.root, sandbox.location, setup.forbidden))
    recorder.fail('file written outside the location', 'the whole case', path);
  // Closed before the location is removed, as JsonProvider.close() asks: the spare temp files it
  // creates ahead of the next writes (in the location's directories) may still be landing.
  await catalog.close();
  rmSync(setup.root, { recursive: true, force: true });
  const code = refusalCode(loaded.result);
  return {
    index: setup.index,
    suite: 'json',
    mutation: setup.mutation.name,
    detail: `${setup.seed.scenario} checkpoint ${setup.seed.branch}/${setup.seed.fileName}: ${mutated.detail}`,
    outcome: outcomeOf(loaded.result, recorder.failures),
    ...(code !== undefined ? { code } : {}),
    failures: recorder.failures,
    wallMs: performance.now() - started,
    resumed,
  };
}
