import { cliError, usageError } from '../core/cli-error.js';

/** `@crewline/worker`, an optional peer: loaded only by `crewline worker` and `crewline runs`. */
export async function loadWorkerPackage(): Promise<typeof import('@crewline/worker')> {
  try {
    return await import('@crewline/worker');
  } catch (error) {
    const missing =
      (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' &&
      String(error).includes('@crewline/worker');
    if (!missing) throw error;
    throw cliError(
      'provider_unavailable',
      'crewline worker and crewline runs need @crewline/worker; install it in this project: npm install @crewline/worker',
      { cause: error },
    );
  }
}

/** The queue's Postgres URL: `--location`, else `CREWLINE_WORKER_LOCATION`. */
export function queueLocation(
  given: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  command: string,
): string {
  const location = given ?? env.CREWLINE_WORKER_LOCATION;
  if (location === undefined || location === '') {
    throw cliError(
      'invalid_argument',
      `crewline ${command} needs the queue's Postgres URL: --location postgres://user@host:5432/db or CREWLINE_WORKER_LOCATION (the password from PGPASSWORD)`,
    );
  }
  // Checked here, before the project and the worker package load: a path or another scheme is a
  // mistake in the call (exit 2), where the worker's own check would exit 1 as a configuration error.
  if (!/^postgres(ql)?:\/\//i.test(location)) {
    throw usageError(
      `location ${JSON.stringify(location)} is not a postgres:// URL; the run queue lives in Postgres: pass --location postgres://user@host:5432/database (or set CREWLINE_WORKER_LOCATION)`,
    );
  }
  return location;
}
