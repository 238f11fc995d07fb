import { randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh random token for the explorer's URL (24 random bytes, URL-safe). */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/** The cookie the page's own requests (module imports, the event stream) carry the token in. */
export function tokenCookieName(port: number): string {
  // Cookies are per host, not per port: two explorers on one machine must not overwrite each other's.
  return `crewline_explorer_${port}`;
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

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const equals = part.indexOf('=');
    if (equals > 0 && part.slice(0, equals).trim() === name) return part.slice(equals + 1).trim();
  }
  return undefined;
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
 * 127.0.0.1 or localhost with the server's port; see {@link allowedHosts}) (a page on another site that rebinds its DNS name to 127.0.0.1 sends its own
 * name); an `Origin`, when sent, must be this server (no other site's script gets an answer, and no
 * CORS header is ever sent); the token must come in the `x-crewline-token` header, the `token` query
 * parameter or the port's cookie. Changes (anything but GET and HEAD) need the header: a form or a
 * link from elsewhere cannot set it.
 */
export function refuseRequest(
  request: GuardedRequest,
  port: number,
  token: string,
  hosts: ReadonlySet<string> = allowedHosts(port),
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
  const headerToken = request.header('x-crewline-token');
  const reading = request.method === 'GET' || request.method === 'HEAD';
  const presented = reading
    ? [
        headerToken,
        request.url.searchParams.get('token') ?? undefined,
        cookieValue(request.header('cookie'), tokenCookieName(port)),
      ]
    : [headerToken];
  if (!presented.some((given) => sameToken(given, token))) {
    return {
      status: 401,
      message: reading
        ? 'this explorer needs its token: open the URL `crewline checkpoint serve` printed (each start prints a new one)'
        : 'changes need the x-crewline-token header',
    };
  }
  return undefined;
}
