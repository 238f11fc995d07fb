import { randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh random token for the explorer's URL (24 random bytes, URL-safe). */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/** The headers a request is judged on, lower-case names. */
export interface GuardedRequest {
  method: string;
  url: URL;
  header(name: string): string | undefined;
}

export interface Refusal {
  status: 401 | 403;
  message: string;
}

function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Where a request may carry the token: nowhere for the page and its static files (they hold no data,
 * and a browser fetches them, module imports included, without a way to add a header), the header or
 * the `token` query parameter for the event stream (`EventSource` cannot set a header), the
 * `x-crewline-token` header for everything else. Never a cookie: a browser sends a cookie of
 * 127.0.0.1 to every other server on 127.0.0.1, whatever its port.
 */
export function tokenPlace(method: string, pathname: string): 'none' | 'header-or-query' | 'header' {
  const reading = method === 'GET' || method === 'HEAD';
  if (reading && (pathname === '/' || pathname.startsWith('/assets/'))) return 'none';
  if (method === 'GET' && pathname === '/api/events') return 'header-or-query';
  return 'header';
}

/** True for a name or address that only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

/** True for the addresses that mean "every interface": 0.0.0.0 and ::. */
export function isWildcardHost(hostname: string): boolean {
  const name = hostname.replace(/^\[|\]$/g, '');
  return name === '0.0.0.0' || name === '::';
}

/** `host:port` as a `Host` header names it: IPv6 addresses in brackets. */
export function hostWithPort(hostname: string, port: number): string {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return `${bare.includes(':') ? `[${bare}]` : bare}:${port}`.toLowerCase();
}

/**
 * The hosts a browser may name in `Host` and `Origin`, each with this port: the loopback names, the
 * host the server was bound to, and — bound to every interface — this machine's addresses and name
 * (`names`, from the operating system). Any other name is a page that rebound its DNS name to us.
 */
export function allowedHosts(
  port: number,
  hostname = '127.0.0.1',
  names: readonly string[] = [],
): Set<string> {
  const hosts = ['127.0.0.1', 'localhost', '::1'];
  if (!isWildcardHost(hostname)) hosts.push(hostname);
  else hosts.push(...names);
  return new Set(hosts.map((host) => hostWithPort(host, port)));
}

/**
 * Decides whether a request may be served. In order: the `Host` must be one of `hosts` (by default
 * 127.0.0.1 or localhost with the server's port; see {@link allowedHosts}) (a page on another site
 * that rebinds its DNS name to 127.0.0.1 sends its own name); an `Origin`, when sent, must be this
 * server (no other site's script gets an answer, and no CORS header is ever sent); no cross-site
 * `Sec-Fetch-Site`. Then the token where {@link tokenPlace} allows it: none for the page and its
 * static files, the `x-crewline-token` header for the API (a form or a link from elsewhere cannot set
 * it), or also the `token` query parameter for the event stream.
 *
 * @param command how a refusal names the CLI (see commandName); default `crewline`.
 */
export function refuseRequest(
  request: GuardedRequest,
  port: number,
  token: string,
  hosts: ReadonlySet<string> = allowedHosts(port),
  command = 'crewline',
): Refusal | undefined {
  const host = request.header('host');
  if (host === undefined || !hosts.has(host.toLowerCase())) {
    return { status: 403, message: `host ${JSON.stringify(host ?? '')} is not this explorer's` };
  }
  const origin = request.header('origin');
  if (origin !== undefined && origin !== 'null') {
    let originHost: string | undefined;
    try {
      const parsed = new URL(origin);
      originHost = parsed.protocol === 'http:' ? parsed.host.toLowerCase() : undefined;
    } catch {
      originHost = undefined;
    }
    if (originHost === undefined || !hosts.has(originHost)) {
      return { status: 403, message: 'requests from other origins are refused' };
    }
  } else if (origin === 'null') {
    return { status: 403, message: 'requests from other origins are refused' };
  }
  if (request.header('sec-fetch-site') === 'cross-site') {
    return { status: 403, message: 'cross-site requests are refused' };
  }
  const place = tokenPlace(request.method, request.url.pathname);
  if (place === 'none') return undefined;
  const presented = [request.header('x-crewline-token')];
  if (place === 'header-or-query') presented.push(request.url.searchParams.get('token') ?? undefined);
  if (!presented.some((given) => sameToken(given, token))) {
    return {
      status: 401,
      message:
        request.method === 'GET' || request.method === 'HEAD'
          ? `this explorer needs its token: open the URL \`${command} checkpoint serve\` printed (each start prints a new one)`
          : 'changes need the x-crewline-token header',
    };
  }
  return undefined;
}
