import { describe, expect, it } from 'vitest';
import { allowedHosts, isLoopbackHost, refuseRequest, tokenPlace } from './request-guard.js';

const token = 't'.repeat(32);

function request(headers: Record<string, string>, method = 'GET', path = '/api/graph') {
  const lower = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  return { method, url: new URL(`http://ignored${path}`), header: (name: string) => lower[name] };
}

const local = { host: '127.0.0.1:4100' };
const status = (headers: Record<string, string>, method?: string, path?: string) =>
  refuseRequest(request(headers, method, path), 4100, token)?.status ?? 200;

describe('the explorer request guard', () => {
  it('tells loopback names from the rest', () => {
    expect(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '192.0.2.2', 'example.com', '::'].some(isLoopbackHost)).toBe(false);
  });

  it('lets a server bound to one address be named by it, and by no other name', () => {
    const hosts = allowedHosts(4100, '192.0.2.2');
    const ok = refuseRequest(
      request({ host: '192.0.2.2:4100', origin: 'http://192.0.2.2:4100', 'x-crewline-token': token }),
      4100,
      token,
      hosts,
    );
    expect(ok).toBeUndefined();
    const rebound = refuseRequest(
      request({ host: 'evil.example:4100', 'x-crewline-token': token }),
      4100,
      token,
      hosts,
    );
    expect(rebound?.status).toBe(403);
    const foreignOrigin = refuseRequest(
      request({ host: '192.0.2.2:4100', origin: 'http://evil.example', 'x-crewline-token': token }),
      4100,
      token,
      hosts,
    );
    expect(foreignOrigin?.status).toBe(403);
    expect(refuseRequest(request({ host: '192.0.2.2:4100' }), 4100, token, hosts)?.status).toBe(401);
  });

  it('bound to every interface, accepts the names of this machine only, never 0.0.0.0 itself', () => {
    const hosts = allowedHosts(4100, '0.0.0.0', ['192.0.2.2', 'fd00::2', 'build-box']);
    expect([...hosts].sort()).toEqual(
      [
        '127.0.0.1:4100',
        '192.0.2.2:4100',
        '[::1]:4100',
        '[fd00::2]:4100',
        'build-box:4100',
        'localhost:4100',
      ].sort(),
    );
  });

  it('serves the page and its files without a token, and still checks Host, Origin and Sec-Fetch-Site', () => {
    for (const path of ['/', '/?token=stale', '/assets/app.js', '/assets/style.css']) {
      expect(status(local, 'GET', path), path).toBe(200);
      expect(status(local, 'HEAD', path), path).toBe(200);
      expect(status({ host: 'evil.example:4100' }, 'GET', path), path).toBe(403);
      expect(status({ ...local, origin: 'http://127.0.0.1:4101' }, 'GET', path), path).toBe(403);
      expect(status({ ...local, 'sec-fetch-site': 'cross-site' }, 'GET', path), path).toBe(403);
      // Only reading them: anything else there needs the token header like the API.
      expect(status(local, 'POST', path), path).toBe(401);
    }
    expect(tokenPlace('GET', '/assets/app.js')).toBe('none');
    expect(tokenPlace('GET', '/api/graph')).toBe('header');
  });

  it('takes the token from the header, from the query only on the event stream, never from a cookie', () => {
    const cookie = { cookie: `crewline_explorer_4100=${token}` };
    for (const path of ['/api/graph', '/api/session', '/api/checkpoints/c1', '/api/events', '/api/runs']) {
      expect(status({ ...local, 'x-crewline-token': token }, 'GET', path), path).toBe(200);
      expect(status({ ...local, 'x-crewline-token': 'x'.repeat(32) }, 'GET', path), path).toBe(401);
      expect(status({ ...local, ...cookie }, 'GET', path), path).toBe(401);
      expect(status(local, 'GET', path), path).toBe(401);
    }
    expect(status(local, 'GET', `/api/events?token=${token}`)).toBe(200);
    expect(status(local, 'GET', `/api/events?token=${'x'.repeat(32)}`)).toBe(401);
    for (const path of ['/api/graph', '/api/session', '/api/diff?a=1&b=2'])
      expect(status(local, 'GET', `${path}${path.includes('?') ? '&' : '?'}token=${token}`), path).toBe(401);
    // A change: the header only, which a form or a link from another site cannot send.
    expect(status({ ...local, 'x-crewline-token': token }, 'POST', '/api/runs')).toBe(200);
    expect(status(local, 'POST', `/api/runs?token=${token}`)).toBe(401);
    expect(status(local, 'POST', `/api/events?token=${token}`)).toBe(401);
    expect(status({ ...local, ...cookie }, 'POST', '/api/runs')).toBe(401);
    expect(refuseRequest(request(local, 'POST', '/api/runs'), 4100, token)?.message).toBe(
      'changes need the x-crewline-token header',
    );
  });

  it('a default guard accepts only the loopback names with the port', () => {
    const hosts = allowedHosts(4100);
    expect(hosts.has('127.0.0.1:4100')).toBe(true);
    expect(hosts.has('localhost:4100')).toBe(true);
    expect(hosts.has('127.0.0.1:4101')).toBe(false);
    expect(hosts.has('192.0.2.2:4100')).toBe(false);
  });
});
