import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseDocumentText, readDocument, validateDocument } from '@crewline/runtime-state';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCheckpointFileName, parseTempFileName } from './file-names.js';
import { JsonProvider } from './json-provider.js';
import { spawnScript } from './test-support/spawn.js';
import { resetTempFileSweeps, STALE_TEMP_FILE_AGE_MS } from './write/temp-sweep.js';

const trials = 30;
const parallel = 3;

interface TrialResult {
  acknowledged: string[];
}

/** Starts a writer, waits until it has written once, kills it with SIGKILL at a random moment. */
function crashTrial(location: string, trial: number): Promise<TrialResult> {
  const child = spawnScript('./crash-writer.ts', [location, String(trial)]);
  const acknowledged: string[] = [];
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolvePromise, reject) => {
    let killed = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const lines = stdout.split('\n');
      stdout = lines.pop()!;
      for (const line of lines) {
        acknowledged.push(line.replace(/^ready /, ''));
        if (line.startsWith('ready ') && !killed) {
          killed = true;
          setTimeout(() => child.kill('SIGKILL'), Math.floor(Math.random() * 80));
        }
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolvePromise({ acknowledged });
      else
        reject(
          new Error(
            `crash writer ${trial} ended with ${signal ?? code} before it was killed: ${stderr.slice(-2000)}`,
          ),
        );
    });
  });
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).map((path) => join(directory, path));
}

describe('crash safety', () => {
  const location = mkdtempSync(join(tmpdir(), 'crewline-json-crash-'));
  afterAll(() => rmSync(location, { recursive: true, force: true }));

  it(`${trials} writers killed with SIGKILL at random moments leave no torn or unreadable checkpoint`, async () => {
    const acknowledged: string[] = [];
    for (let round = 0; round < trials / parallel; round += 1) {
      const results = await Promise.all(
        Array.from({ length: parallel }, (_, index) => crashTrial(location, round * parallel + index)),
      );
      for (const result of results) acknowledged.push(...result.acknowledged);
    }

    const files = filesUnder(location);
    const checkpoints = files.filter((path) => parseCheckpointFileName(basename(path)) !== undefined);
    const temps = files.filter((path) => parseTempFileName(basename(path)) !== undefined);
    // Every visible checkpoint file is whole and valid, and names what it holds.
    for (const path of checkpoints) {
      const document = validateDocument(parseDocumentText(readFileSync(path, 'utf8'), { origin: path }));
      expect(parseCheckpointFileName(basename(path))).toEqual({
        id: document.metadata.id,
        parentId: document.metadata.parentId,
      });
    }
    // Every write a writer saw succeed is on disk (the kill came after the rename).
    const onDisk = new Set(checkpoints.map((path) => parseCheckpointFileName(basename(path))!.id));
    for (const id of acknowledged)
      expect(onDisk.has(id), `acknowledged checkpoint ${id} is missing`).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(trials);

    const provider = new JsonProvider();
    const listed = await provider.list(location);
    expect(listed.length).toBe(checkpoints.length);
    for (const entry of listed) expect(entry.reference.endsWith('.json')).toBe(true);
    // A kill between the rename and the id index entry (or inside it) never breaks a read by id.
    for (const id of acknowledged) expect((await readDocument(provider, location, id)).metadata.id).toBe(id);

    // Leftover temp files of the killed writers are swept: by the first use above, at once, where
    // their names tell that their writers ran in this pid space (Linux); else once they are stale.
    const left = filesUnder(location).filter((path) => parseTempFileName(basename(path)) !== undefined);
    if (existsSync('/proc/self/ns/pid') && existsSync('/proc/sys/kernel/random/boot_id'))
      expect(left).toEqual([]);
    const stale = new Date(Date.now() - 2 * STALE_TEMP_FILE_AGE_MS);
    for (const path of left) utimesSync(path, stale, stale);
    resetTempFileSweeps();
    await new JsonProvider().list(location);
    expect(filesUnder(location).filter((path) => parseTempFileName(basename(path)) !== undefined)).toEqual(
      [],
    );
    console.info(
      `[crash trial] ${trials} kills, ${checkpoints.length} checkpoint files all valid, ${acknowledged.length} acknowledged writes all present, ${temps.length} interrupted writes left temp files (swept)`,
    );
  }, 120_000);
});
