import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, writeFixture } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';
import { sourceCommand } from '../test-support/subprocess.js';

describe('crewline checkpoint serve as a command', () => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-serve-command-');
    fixture = await writeFixture('json', directory.path);
  });
  afterAll(async () => {
    await fixture?.provider.close?.();
    await directory?.remove();
  });

  it('is listed in help and refuses a bad port with a usage error', async () => {
    const help = await runCommand(['--help'], { cwd: directory.path });
    expect(help.stdout).toMatch(/crewline checkpoint serve\s+the lineage explorer/);
    const bad = await runCommand(['checkpoint', 'serve', '--port', 'eighty'], { cwd: directory.path });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--port must be a whole number');
  });

  it('serves the default location read-only on 127.0.0.1 until Ctrl+C, then exits 0', async () => {
    const child = spawn(process.execPath, sourceCommand(['checkpoint', 'serve']), {
      cwd: directory.path,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /open (http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+)/.exec(stdout);
        if (match) resolve(match[1]!);
      });
      child.on('close', () => reject(new Error(`serve exited early: ${stdout}${stderr}`)));
    });
    expect(stdout).toContain('Lineage explorer of ./.checkpoints (json)');
    expect(stdout).toContain('read-only');
    const page = await fetch(url);
    expect(page.status).toBe(200);
    const origin = new URL(url).origin;
    const token = new URLSearchParams(new URL(url).hash.slice(1)).get('token')!;
    const graph = await fetch(`${origin}/api/graph`, { headers: { 'x-crewline-token': token } });
    expect(((await graph.json()) as { count: number }).count).toBe(fixture.main.length + 1);
    expect((await fetch(`${origin}/api/graph`)).status).toBe(401);
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
  }, 30_000);

  it('with --host 0.0.0.0 warns on stderr that other machines can reach it, and still needs the token', async () => {
    const child = spawn(process.execPath, sourceCommand(['checkpoint', 'serve', '--host', '0.0.0.0']), {
      cwd: directory.path,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /open (http:\/\/\S+\/#token=[\w-]+)/.exec(stdout);
        if (match) resolve(match[1]!);
      });
      child.on('close', () => reject(new Error(`serve exited early: ${stdout}${stderr}`)));
    });
    // stderr and stdout are separate pipes: the warning, written first, may arrive after the URL.
    for (let waited = 0; !stderr.includes('Leave --host out') && waited < 10_000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(stderr).toMatch(
      /crewline warn \[serve\] --host 0\.0\.0\.0 lets other machines reach the explorer/,
    );
    expect(stderr).toContain('Leave --host out');
    const port = new URL(url).port;
    expect((await fetch(`http://127.0.0.1:${port}/api/graph`)).status).toBe(401);
    const token = new URLSearchParams(new URL(url).hash.slice(1)).get('token')!;
    const graph = await fetch(`http://127.0.0.1:${port}/api/graph`, {
      headers: { 'x-crewline-token': token },
    });
    expect(graph.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }, 30_000);
});
