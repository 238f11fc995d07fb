import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, join } from 'node:path';

/** The environment variable that points the tests at an existing server instead. */
export const POSTGRES_URL_VARIABLE = 'CREWLINE_TEST_POSTGRES_URL';

/** The one line a developer without Postgres sees. */
export const HOW_TO_ENABLE =
  `[provider-postgres] Postgres tests skipped: set ${POSTGRES_URL_VARIABLE}=postgres://user:password@host:5432/database ` +
  'or install PostgreSQL so that initdb is found (apt-get install postgresql)';

/** Where `initdb` and `pg_ctl` are: PATH, then Debian's /usr/lib/postgresql/<version>/bin (newest first). */
export function findPostgresBinaries(): string | undefined {
  const candidates = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .sort((left, right) => Number(right) - Number(left));
    for (const version of versions) candidates.push(join(debian, version, 'bin'));
  }
  return candidates.find(
    (directory) => existsSync(join(directory, 'initdb')) && existsSync(join(directory, 'pg_ctl')),
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** A throwaway cluster: started by {@link startCluster}, gone after `stop()`. */
export interface TestCluster {
  /**
   * A TCP URL (127.0.0.1) of the cluster's `postgres` database, user `crewline`, with its password:
   * connections over TCP must log in with it (SCRAM), so the tests exercise the provider's handling
   * of credentials.
   */
  url: string;
  /** The same server through its unix socket in the cluster's directory (no password needed). */
  socketUrl: string;
  directory: string;
  stop(): void;
}

/**
 * Runs `initdb` in a fresh temporary directory and starts the server on a free port, listening on
 * 127.0.0.1 (password required) and on a unix socket in that directory (trusted), without fsync
 * (nothing in it outlives the tests) unless `durable` (benchmarks: Postgres's own defaults).
 * Postgres refuses to run as root: as root, the cluster belongs to the `postgres` user that Debian's
 * package creates, and every command runs through `runuser`.
 */
export async function startCluster(
  binaries: string,
  options: { durable?: boolean } = {},
): Promise<TestCluster> {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-pg-'));
  const data = join(directory, 'data');
  const asRoot = process.getuid?.() === 0;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const passwordFile = join(directory, 'password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(directory, uid, gid);
    chownSync(passwordFile, uid, gid);
  }
  const run = (command: string, args: string[]) => {
    const [file, fullArgs] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(binaries, command), ...args]]
      : [join(binaries, command), args];
    const result = spawnSync(file, fullArgs, { encoding: 'utf8', cwd: directory });
    if (result.status !== 0) {
      throw new Error(
        `${command} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}`,
      );
    }
  };
  const stop = () => {
    if (existsSync(join(data, 'postmaster.pid'))) {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already gone: only the directory is left to remove.
      }
    }
    rmSync(directory, { recursive: true, force: true });
  };
  try {
    run('initdb', [
      '-D',
      data,
      '-U',
      'crewline',
      `--pwfile=${passwordFile}`,
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    rmSync(passwordFile);
    let lastError: unknown;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const port = await freePort();
      const settings = [
        '-c listen_addresses=127.0.0.1',
        `-p ${port}`,
        `-k ${directory}`,
        ...(options.durable ? [] : ['-c fsync=off', '-c full_page_writes=off']),
        '-c max_connections=300',
        '-c shared_buffers=64MB',
      ].join(' ');
      try {
        run('pg_ctl', [
          '-D',
          data,
          '-o',
          settings,
          '-l',
          join(directory, 'server.log'),
          '-w',
          '-t',
          '60',
          'start',
        ]);
        return {
          url: `postgres://crewline:${password}@127.0.0.1:${port}/postgres`,
          socketUrl: `postgres://crewline@${encodeURIComponent(directory)}:${port}/postgres`,
          directory,
          stop,
        };
      } catch (error) {
        lastError = error; // most likely the port was taken in between: try another
      }
    }
    throw lastError;
  } catch (error) {
    stop();
    throw error;
  }
}

/** The user tests run as, for messages. */
export function currentUser(): string {
  return userInfo().username;
}
