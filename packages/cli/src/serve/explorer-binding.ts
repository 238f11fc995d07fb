// Where the explorer listens: the names this machine answers to (for a server bound to every
// interface), and a failed bind turned into an error saying what to change. Split from
// explorer-server.ts.
import { hostname as machineName, networkInterfaces } from 'node:os';
import { cliError } from '../core/cli-error.js';

/** This machine's name and the addresses of its interfaces (external ones first). */
export function machineNames(): string[] {
  const addresses = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .sort(
      (a, b) =>
        Number(a.internal) - Number(b.internal) || Number(a.family !== 'IPv4') - Number(b.family !== 'IPv4'),
    )
    .map((entry) => entry.address);
  return [...addresses, machineName()];
}

/** A failed bind as a crewline error saying what to change (another port, another host). */
export async function listenError(error: unknown, hostname: string, port: number): Promise<unknown> {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EADDRNOTAVAIL' && code !== 'EACCES') return error;
  const where = `port ${port} on ${hostname}`;
  const reason =
    code === 'EADDRINUSE'
      ? `${where} is in use; pick another with --port, or leave --port out for a free one`
      : code === 'EACCES'
        ? `${where} needs privileges this process lacks; pick a port above 1023 with --port`
        : `${hostname} is not an address of this machine; pick one with --host`;
  // A port in use is the machine's state, not a mistake in the call (exit code 1, not 2).
  return cliError(code === 'EADDRINUSE' ? 'conflict' : 'invalid_argument', `checkpoint serve: ${reason}`, {
    cause: error,
  });
}
