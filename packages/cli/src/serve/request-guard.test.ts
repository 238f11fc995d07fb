import { describe, expect, it } from 'vitest';
import { allowedHosts, isLoopbackHost, refuseRequest } from './request-guard.js';

const token = 't'.repeat(32);

function request(headers: Record<string, string>, method = 'GET') {
  const lower = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  return { method, url: new URL('http://ignored/api/graph'), header: (name: string) => lower[name] };
}

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

  it('a default guard accepts only the loopback names with the port', () => {
    const hosts = allowedHosts(4100);
    expect(hosts.has('127.0.0.1:4100')).toBe(true);
    expect(hosts.has('localhost:4100')).toBe(true);
    expect(hosts.has('127.0.0.1:4101')).toBe(false);
    expect(hosts.has('192.0.2.2:4100')).toBe(false);
  });
});
