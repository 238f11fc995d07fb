import pg from 'pg';

/**
 * A `pg.Client` that closes its socket when it fails to connect. pg leaves the socket of a login it
 * gave up on its own side open (no password for a server that asks for one: "SASL: ... client
 * password must be a string"), and the server waits for an answer until its authentication_timeout
 * (60 s by default): a command that said at once what was wrong could not end until then. The
 * provider's pools and the worker's (its queue, its listening connection) use it.
 */
export class SocketClosingClient extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: ((error: Error) => void) | ((error: null, client: pg.Client) => void)): void;
  override connect(
    callback?: ((error: Error) => void) | ((error: null, client: pg.Client) => void),
  ): Promise<pg.Client> | undefined {
    if (callback) {
      super.connect((error: Error | null) => {
        if (error) socketOf(this)?.destroy();
        (callback as (error: Error | null, client: pg.Client) => void)(error, this);
      });
      return;
    }
    return super.connect().catch((error: unknown) => {
      socketOf(this)?.destroy();
      throw error;
    });
  }
}

/** The socket under a client (node-postgres keeps it on its connection, which its types do not declare). */
export function socketOf(client: pg.Client): { destroy(): void } | undefined {
  return (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
}
