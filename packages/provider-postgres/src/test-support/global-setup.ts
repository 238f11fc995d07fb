import type { TestProject } from 'vitest/node';
import { findPostgresBinaries, HOW_TO_ENABLE, POSTGRES_URL_VARIABLE, startCluster } from './test-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The server the tests use; undefined when there is none (the tests are then skipped). */
    postgresUrl: string | undefined;
  }
}

/**
 * Gives the tests a Postgres server: the one `CREWLINE_TEST_POSTGRES_URL` names, else a throwaway
 * cluster started here (when initdb is installed) and removed when the run ends, failed tests
 * included. Without either, the tests are skipped with one line saying how to enable them; under CI
 * (`CI` set) that is a failure instead.
 */
export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const given = process.env[POSTGRES_URL_VARIABLE];
  if (given) {
    project.provide('postgresUrl', given);
    return undefined;
  }
  const binaries = findPostgresBinaries();
  if (binaries === undefined) {
    if (process.env.CI) {
      throw new Error(
        `[provider-postgres] CI is set but there is no Postgres to test against: install postgresql (.ci/run does) or set ${POSTGRES_URL_VARIABLE}`,
      );
    }
    process.stderr.write(`${HOW_TO_ENABLE}\n`);
    project.provide('postgresUrl', undefined);
    return undefined;
  }
  const started = Date.now();
  const cluster = await startCluster(binaries);
  process.env[POSTGRES_URL_VARIABLE] = cluster.url;
  project.provide('postgresUrl', cluster.url);
  if (process.env.CREWLINE_TEST_POSTGRES_VERBOSE) {
    process.stderr.write(
      `[provider-postgres] test cluster ${cluster.url} started in ${Date.now() - started} ms\n`,
    );
  }
  // Also on Ctrl+C or a crash of the run: never leave a server behind.
  const onExit = () => cluster.stop();
  process.once('exit', onExit);
  return () => {
    process.off('exit', onExit);
    cluster.stop();
  };
}
