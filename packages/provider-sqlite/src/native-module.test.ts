import { createRequire } from 'node:module';
import { CrewlineError } from '@crewline/events';
import { growingRun } from '@crewline/provider-testkit/fixtures';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

// better-sqlite3 loads its compiled module in its Database constructor, the first time one is made.
// The mock below stands in for the driver: while `driver.loadError` is set, that load fails with it,
// as it does when the install script never ran (npm and pnpm skip install scripts not approved) or
// the module was built for another Node.js; otherwise it is the real driver.
const driver = vi.hoisted(() => ({ loadError: undefined as Error | undefined }));
vi.mock('better-sqlite3', async (importOriginal) => {
  const Real = ((await importOriginal()) as { default: new (...parameters: unknown[]) => object }).default;
  function Database(this: unknown, ...parameters: unknown[]) {
    if (driver.loadError) throw driver.loadError;
    return new Real(...parameters);
  }
  Database.prototype = Real.prototype;
  return { default: Database };
});

/** The error better-sqlite3's `bindings` lookup throws when no build of the module exists. */
function bindingsNotFound(): Error {
  const requireFromDriver = createRequire(createRequire(import.meta.url).resolve('better-sqlite3'));
  const bindings = requireFromDriver('bindings') as (name: string) => unknown;
  try {
    bindings('crewline_never_built.node');
  } catch (error) {
    return error as Error;
  }
  throw new Error('bindings found a module that does not exist');
}

/** Node's error for a compiled module built against another Node.js (its words, as of Node 20). */
function builtForAnotherNode(): Error {
  return Object.assign(
    new Error(
      "The module '/project/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\n" +
        'was compiled against a different Node.js version using\n' +
        'NODE_MODULE_VERSION 127. This version of Node.js requires\n' +
        'NODE_MODULE_VERSION 115. Please try re-compiling or re-installing\n' +
        'the module (for instance, using `npm rebuild` or `npm install`).',
    ),
    { code: 'ERR_DLOPEN_FAILED' },
  );
}

/** Node's error for a compiled module of another platform (node_modules copied from a Mac, say). */
function builtForAnotherMachine(): Error {
  return Object.assign(
    new Error('/project/node_modules/better-sqlite3/build/Release/better_sqlite3.node: invalid ELF header'),
    { code: 'ERR_DLOPEN_FAILED' },
  );
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  driver.loadError = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** What the message must advise, and must not, for one way the module fails to load. */
interface Advice {
  says: string[];
  never: string[];
}

// No build at all: its install script was skipped. npm 10 (Node 20's) has no approve-scripts command,
// so that step must not be chained to the rebuild with `&&` (the rebuild would never run); pnpm's
// approve-builds builds the module itself, so no rebuild is advised after it.
const skippedScriptAdvice: Advice = {
  says: [
    'npm rebuild better-sqlite3',
    'with npm 11.16 or later, run npm approve-scripts better-sqlite3 first',
    'pnpm approve-builds',
  ],
  never: ['&&', 'pnpm rebuild'],
};

// A build for another Node.js or machine: its install script did run, so nothing needs approving.
const rebuildAdvice: Advice = {
  says: ['npm rebuild better-sqlite3', 'pnpm rebuild better-sqlite3'],
  never: ['approve', '&&'],
};

function expectNotBuilt(error: unknown, cause: Error, advice: Advice): void {
  expect(CrewlineError.hasCode(error, 'provider_unavailable'), String(error)).toBe(true);
  const message = (error as Error).message;
  expect(message).toContain("better-sqlite3's native module");
  for (const words of advice.says) expect(message).toContain(words);
  for (const words of advice.never) expect(message).not.toContain(words);
  // Not a damaged or unreadable database, and not the 13 paths the lookup tried.
  expect(message).not.toMatch(/cannot open database|read to database|failed:|Tried:/);
  expect((error as Error).cause).toBe(cause);
}

/** A database holding two checkpoints, written while the driver still loads. */
function writtenDatabase(): string {
  const raw = temporaryDatabase();
  const writer = new SqliteProvider();
  const location = writer.resolveLocation(raw);
  const run = growingRun({ provider: writer, location, tasks: 1 });
  run.state.writeCheckpointSync({ trigger: run.step() });
  run.state.writeCheckpointSync({ trigger: run.step() });
  writer.close();
  cleanups.push(() => removeTemporaryDatabase(raw));
  return location;
}

describe.each([
  ['no build of it (install script skipped)', bindingsNotFound, skippedScriptAdvice],
  ['built for another Node.js', builtForAnotherNode, rebuildAdvice],
  ['built for another machine', builtForAnotherMachine, rebuildAdvice],
] as const)("better-sqlite3's native module cannot load: %s", (_case, loadError, advice) => {
  it('listing a database is provider_unavailable saying how to build it', async () => {
    const location = writtenDatabase();
    const cause = loadError();
    driver.loadError = cause;
    const provider = new SqliteProvider();
    cleanups.push(() => provider.close());
    const error = await provider.list(location).catch((thrown: unknown) => thrown);
    expectNotBuilt(error, cause, advice);
  });

  it('writing to a new database file is provider_unavailable saying how to build it', () => {
    const cause = loadError();
    driver.loadError = cause;
    const provider = new SqliteProvider();
    const raw = temporaryDatabase();
    cleanups.push(() => {
      provider.close();
      removeTemporaryDatabase(raw);
    });
    const run = growingRun({ provider, location: provider.resolveLocation(raw), tasks: 1 });
    let error: unknown;
    try {
      run.state.writeCheckpointSync({ trigger: run.step() });
    } catch (thrown) {
      error = thrown;
    }
    expectNotBuilt(error, cause, advice);
  });

  it('writing to a database in memory is provider_unavailable saying how to build it', () => {
    const cause = loadError();
    driver.loadError = cause;
    const provider = new SqliteProvider();
    cleanups.push(() => provider.close());
    const run = growingRun({ provider, location: ':memory:', tasks: 1 });
    let error: unknown;
    try {
      run.state.writeCheckpointSync({ trigger: run.step() });
    } catch (thrown) {
      error = thrown;
    }
    expectNotBuilt(error, cause, advice);
  });
});

describe('an error of the driver that is not about its native module', () => {
  it('keeps its own code and words', async () => {
    const location = writtenDatabase();
    driver.loadError = Object.assign(new Error('unable to open database file'), { code: 'SQLITE_IOERR' });
    const provider = new SqliteProvider();
    cleanups.push(() => provider.close());
    const error = await provider.list(location).catch((thrown: unknown) => thrown);
    expect(CrewlineError.isInstance(error)).toBe(true);
    expect(CrewlineError.hasCode(error, 'provider_unavailable')).toBe(false);
    expect((error as Error).message).toContain('unable to open database file');
  });
});
