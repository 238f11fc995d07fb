// What the fuzz cases start from: real checkpoints written by real runs (the crash trials' crew and
// flow on the offline model, checkpointing on '*'), as JSON files and as one SQLite database. The
// runs' own locations are deleted afterwards: a case that makes one appear again wrote where a
// checkpoint's stored setting pointed, outside the location it was read from.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { LanguageModelObject } from '@crewline/runtime';
import type { CheckpointConfigInput, CheckpointDocument, CheckpointProvider } from '@crewline/runtime-state';
import { crashCrew, crashInputs, crashModel, registerCrashProject } from '../crash/crash-crew.js';
import { crashFlow, registerCrashFlow } from '../crash/crash-flow.js';
import type { ScenarioName } from '../crash/scenario.js';
import { scratchDirectory } from './scratch-directory.js';

/** One checkpoint file a real run wrote. */
export interface SeedCheckpoint {
  scenario: ScenarioName;
  /** The branch directory it lies in (`main`). */
  branch: string;
  fileName: string;
  text: string;
}

export interface SeedMaterial {
  checkpoints: SeedCheckpoint[];
  /** A closed database (its WAL folded in) holding a whole crew run and a whole flow run. */
  database: Buffer;
  /** A valid checkpoint document, the source of the fresh writes tried on damaged databases. */
  document: CheckpointDocument;
  /** Where the runs wrote (now deleted): nothing may write there again. */
  runLocations: string[];
}

let registeredModel: LanguageModelObject | undefined;

/**
 * Registers the crash model (no latency, so the runs and every resume a case makes are quick) and
 * the crash flow by name, once per process.
 */
export function registerFuzzProject(): void {
  if (registeredModel) return;
  registeredModel = crashModel({ latencyMs: 0, onRequest: () => undefined });
  registerCrashProject(registeredModel);
  registerCrashFlow(registeredModel);
}

async function runScenario(scenario: ScenarioName, provider: CheckpointProvider, location: string) {
  const checkpoint: CheckpointConfigInput = { location, onEvents: '*', provider };
  if (scenario === 'flow') await crashFlow(checkpoint).kickoff();
  else await crashCrew(registeredModel!, checkpoint).kickoff({ inputs: crashInputs });
}

function jsonSeeds(scenario: ScenarioName, location: string): SeedCheckpoint[] {
  return readdirSync(location, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
    .map((entry) => ({
      scenario,
      branch: relative(location, entry.parentPath).split(sep).join('/'),
      fileName: entry.name,
      text: readFileSync(join(entry.parentPath, entry.name), 'utf8'),
    }))
    .sort((a, b) => a.fileName.localeCompare(b.fileName));
}

/** Runs the crew and the flow on both providers and keeps what they wrote. */
export async function prepareSeedMaterial(): Promise<SeedMaterial> {
  registerFuzzProject();
  const root = scratchDirectory('crewline-fuzz-seeds-');
  const checkpoints: SeedCheckpoint[] = [];
  const databasePath = join(root, 'database', 'checkpoints.db');
  const sqlite = new SqliteProvider();
  try {
    for (const scenario of ['crew', 'flow'] as const) {
      const location = join(root, `json-${scenario}`);
      await runScenario(scenario, new JsonProvider(), location);
      checkpoints.push(...jsonSeeds(scenario, location));
      await runScenario(scenario, sqlite, databasePath);
    }
  } finally {
    sqlite.close();
  }
  const database = readFileSync(databasePath);
  const last = checkpoints.filter((seed) => seed.scenario === 'crew').at(-1)!;
  rmSync(root, { recursive: true, force: true });
  return {
    checkpoints,
    database,
    document: JSON.parse(last.text) as CheckpointDocument,
    runLocations: [root],
  };
}
