/// <reference lib="dom" />
// (The functions handed to page.evaluate run in the browser: DOM types for them.)
import { existsSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

// The system's Chromium (Debian's `chromium` package), never a downloaded one; skipped without it
// outside CI, as explorer-browser.test.ts is.
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(chromiumPath);
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

/** Another local web app on another port of the same host: what it is sent, URL and headers. */
interface OtherApp {
  port: number;
  seen: { url: string; headers: IncomingHttpHeaders }[];
  server: Server;
}

async function otherLocalApp(): Promise<OtherApp> {
  const seen: OtherApp['seen'] = [];
  const server = createServer((request, response) => {
    seen.push({ url: request.url ?? '', headers: request.headers });
    response.setHeader('content-type', 'text/html');
    response.end('<!doctype html><title>another local app</title><p>another local app</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen, server };
}

describe.skipIf(!haveBrowser && !inCi)('the explorer token in Chromium', () => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;
  let explorer: RunningExplorer;
  let browser: Browser;
  let other: OtherApp;
  const registry = cliProviderRegistry();
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    if (!haveBrowser) throw new Error(`CI is set and there is no Chromium at ${chromiumPath}`);
    directory = await temporaryDirectory('crewline-explorer-token-');
    fixture = await writeFixture('json', directory.path);
    explorer = await startExplorer({
      opened: await openLocation(fixture.location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
    });
    other = await otherLocalApp();
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => other?.server.close(resolve));
    await explorer?.close();
    await fixture?.provider.close?.();
    await registry.close();
    await directory?.remove();
  });

  /** A fresh browser profile (no cookie, no storage) with a page that fails the test on a script error. */
  async function freshPage() {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const errors: Error[] = [];
    page.on('pageerror', (error) => {
      errors.push(error);
    });
    return { context, page, errors };
  }

  it('another local web app the user visits next receives no token (the review found the cookie sent to every port)', async () => {
    const { context, page, errors } = await freshPage();
    const explorerRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`http://127.0.0.1:${explorer.port}/`))
        explorerRequests.push(request.url());
    });
    await page.goto(explorer.url);
    await page.waitForSelector('body[data-ready="true"]');
    // The address bar keeps no copy of the token.
    expect(page.url()).toBe(`http://127.0.0.1:${explorer.port}/`);
    for (const host of ['127.0.0.1', 'localhost']) await page.goto(`http://${host}:${other.port}/`);
    expect(other.seen.length).toBeGreaterThanOrEqual(2);
    for (const { url, headers } of other.seen) {
      expect(JSON.stringify({ url, headers })).not.toContain(explorer.token);
      expect(headers.cookie).toBeUndefined();
    }
    expect(await context.cookies()).toEqual([]);
    // Only the event stream carries the token in its URL (EventSource cannot set a header); the page
    // itself was asked for with the token in the fragment, which never leaves the browser.
    const withToken = explorerRequests.filter((url) => url.includes(explorer.token));
    expect(withToken.map((url) => new URL(url).pathname)).toEqual(['/api/events']);
    expect(errors).toEqual([]);
  });

  it('keeps the token for a reload of its tab only, and still opens an old URL with ?token=', async () => {
    const { page, errors } = await freshPage();
    const oldUrl = `http://127.0.0.1:${explorer.port}/?token=${explorer.token}`;
    await page.goto(oldUrl);
    await page.waitForSelector('body[data-ready="true"]');
    expect(page.url()).toBe(`http://127.0.0.1:${explorer.port}/`);
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.locator('#location').textContent()).toContain('(json)');
    // Another profile opening the bare address has no token: the page says what to open.
    const { page: bare } = await freshPage();
    await bare.goto(`http://127.0.0.1:${explorer.port}/`);
    await bare.waitForSelector('#graph-pane .error');
    expect(await bare.locator('#graph-pane .error').textContent()).toContain(
      'this explorer needs its token: open the URL `crewline checkpoint serve` printed',
    );
    expect(errors).toEqual([]);
  });

  it('a URL with the token of an earlier start shows a page that says to open the new one', async () => {
    const { page } = await freshPage();
    await page.goto(`http://127.0.0.1:${explorer.port}/#token=${'x'.repeat(32)}`);
    await page.waitForSelector('#graph-pane .error');
    expect(await page.locator('#graph-pane .error').textContent()).toContain('each start prints a new one');
    expect(page.url()).toBe(`http://127.0.0.1:${explorer.port}/`);
  });
});
