import { connect as connectTcp, createServer, type Socket } from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of a server, that a test can switch into a black hole. */
export interface BlackHoleProxy {
  /** The port it listens on. */
  readonly port: number;
  /** Connections it has accepted so far (a new connection of the provider shows up here). */
  readonly accepted: number;
  /**
   * While on, every byte either side sends is accepted and dropped, and a side that closes is not
   * told to the other: a network that silently lost the route, with no reset to say so. Bytes
   * dropped are gone when it is switched off again, as on such a network.
   */
  blackHole(on: boolean): void;
  /**
   * The same for the connections open now only, for good; new ones pass: a firewall or NAT that
   * forgot the connections it had (their packets dropped), while new ones go through.
   */
  blackHoleOpenConnections(): void;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/** Starts a {@link BlackHoleProxy} forwarding to `host`:`port`. */
export function startBlackHoleProxy(host: string, port: number): Promise<BlackHoleProxy> {
  let silent = false;
  let accepted = 0;
  const sockets = new Set<Socket>();
  /** Sockets of the connections {@link BlackHoleProxy.blackHoleOpenConnections} silenced. */
  const forgotten = new WeakSet<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A reset or a write after the peer closed is part of what the tests provoke.
    socket.on('error', () => undefined);
  };
  const server = createServer((downstream) => {
    accepted += 1;
    const upstream = connectTcp(port, host);
    track(downstream);
    track(upstream);
    const forward = (from: Socket, to: Socket) => {
      from.on('data', (chunk: Buffer) => {
        if (!silent && !forgotten.has(from) && !to.destroyed) to.write(chunk);
      });
      from.on('close', () => {
        if (!silent && !forgotten.has(from)) to.destroy();
      });
    };
    forward(downstream, upstream);
    forward(upstream, downstream);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (typeof address !== 'object' || address === null) {
        reject(new Error('the black hole proxy has no port'));
        return;
      }
      resolve({
        port: address.port,
        get accepted() {
          return accepted;
        },
        blackHole(on) {
          silent = on;
        },
        blackHoleOpenConnections() {
          for (const socket of sockets) forgotten.add(socket);
        },
        close() {
          for (const socket of sockets) socket.destroy();
          return new Promise((closed) => server.close(() => closed()));
        },
      });
    });
  });
}
