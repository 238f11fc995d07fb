import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSpareFileName, parseTempFileName, spareFileName, tempFileName } from '../file-names.js';
import { JsonProvider } from '../json-provider.js';
import {
  isProcessAlive,
  resetTempFileSweeps,
  STALE_SPARE_FILE_AGE_MS,
  STALE_TEMP_FILE_AGE_MS,
} from './temp-sweep.js';
import { writerNameDigits } from './temp-writer.js';

/** A pid above Linux's largest possible pid (2^22), so no process can have it. */
const deadPid = 4_194_400;

function plantTemp(directory: string, pid: number, ageMs: number): string {
  const path = join(directory, `.20200101T000000000-0000abcd.${pid}.0123abcd.tmp`);
  writeFileSync(
    path,
    '{"format": "crewline.checkpoint", "formatVersion": 1, "libraryVersion": "0.1.0",\n"meta',
  );
  const time = new Date(Date.now() - ageMs);
  utimesSync(path, time, time);
  return path;
}

describe('spare file names', () => {
  // A spare's name kept 3 random hex digits after its pid space tag: two of a directory's 8 spares
  // drew one name about once in 40 groups, and the second's exclusive create failed.
  it('are all different for as many spares as the name can tell apart', () => {
    const names = new Set(Array.from({ length: 4096 }, () => spareFileName()));
    expect(names.size).toBe(4096);
    for (const name of names) expect(parseSpareFileName(name)).toBeDefined();
  });
});

describe('temp files of writers', () => {
  let location: string;
  beforeEach(() => {
    location = mkdtempSync(join(tmpdir(), 'crewline-json-temp-'));
    resetTempFileSweeps();
  });
  afterEach(() => rmSync(location, { recursive: true, force: true }));

  it('names temp files .<id>.<pid>.<random>.tmp', () => {
    const name = tempFileName('20200101T000000000-0000abcd');
    expect(name).toMatch(/^\.20200101T000000000-0000abcd\.\d+\.[0-9a-f]{8}\.tmp$/);
    expect(parseTempFileName(name)).toEqual({ pid: process.pid, digits: name.split('.').at(-2) });
    expect(parseTempFileName('20200101T000000000-0000abcd_p-none.json')).toBeUndefined();
  });

  it('knows which pids are alive', () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(process.ppid)).toBe(true);
    expect(isProcessAlive(deadPid)).toBe(false);
  });

  it('ignores temp files when listing and reading, and sweeps only stale ones of dead writers on first use', async () => {
    const provider = new JsonProvider();
    const stored = await provider.write(
      join(location, 'seed'),
      buildCheckpointWrite({ metadata: { branch: 'fork/a' } }),
    );
    const branchDirectory = join(location, 'seed', 'fork', 'a');
    mkdirSync(join(location, 'seed', 'main'));
    const deadAndOld = plantTemp(branchDirectory, deadPid, 2 * STALE_TEMP_FILE_AGE_MS);
    const deadInMain = plantTemp(join(location, 'seed', 'main'), deadPid, 10 * STALE_TEMP_FILE_AGE_MS);
    const deadButYoung = plantTemp(branchDirectory, deadPid + 1, 1000);
    const aliveAndOld = plantTemp(branchDirectory, process.ppid, 10 * STALE_TEMP_FILE_AGE_MS);

    // This process already swept "seed" (before the temp files existed): nothing is removed now.
    expect((await provider.list(join(location, 'seed'))).map((entry) => entry.id)).toEqual([stored.id]);
    expect(existsSync(deadAndOld)).toBe(true);

    // A new process (simulated by forgetting the sweeps) sweeps on its first use.
    resetTempFileSweeps();
    const fresh = new JsonProvider();
    expect((await fresh.list(join(location, 'seed'))).map((entry) => entry.id)).toEqual([stored.id]);
    expect(existsSync(deadAndOld)).toBe(false);
    expect(existsSync(deadInMain)).toBe(false);
    expect(existsSync(deadButYoung)).toBe(true);
    expect(existsSync(aliveAndOld)).toBe(true);
    expect(readdirSync(branchDirectory).filter((name) => name.endsWith('.json'))).toEqual([
      `${stored.id}_p-none.json`,
    ]);
  });

  it('the sync write path sweeps too', () => {
    mkdirSync(join(location, 'main'));
    const stale = plantTemp(join(location, 'main'), deadPid, 2 * STALE_TEMP_FILE_AGE_MS);
    new JsonProvider().writeSync(location, buildCheckpointWrite());
    expect(existsSync(stale)).toBe(false);
  });

  it("leaves a dead-looking writer's empty spare younger than a day (its pid may be in another pid namespace)", async () => {
    const root = join(location, 'shared');
    mkdirSync(join(root, 'main'), { recursive: true });
    const plant = (name: string, ageMs: number, content: string) => {
      const path = join(root, 'main', name);
      writeFileSync(path, content);
      const time = new Date(Date.now() - ageMs);
      utimesSync(path, time, time);
      return path;
    };
    const emptyHourOld = plant(`.spare.${deadPid}.0123abcd.tmp`, 60 * 60 * 1000, '');
    const emptyTwoDaysOld = plant(`.spare.${deadPid}.0123abce.tmp`, 2 * STALE_SPARE_FILE_AGE_MS, '');
    const writtenHourOld = plant(`.spare.${deadPid}.0123abcf.tmp`, 60 * 60 * 1000, '{"format"');
    await new JsonProvider().list(root);
    expect(existsSync(emptyHourOld)).toBe(true);
    expect(existsSync(emptyTwoDaysOld)).toBe(false);
    expect(existsSync(writtenHourOld)).toBe(false);
  });

  // Where the system tells the pid namespace and boot (Linux), a spare's name says it was made here.
  it.skipIf(!existsSync('/proc/self/ns/pid') || !existsSync('/proc/sys/kernel/random/boot_id'))(
    "removes at once the spares and temp files of this pid space's gone writers (a dead pid; this pid before this process started), never a live one's",
    async () => {
      const root = join(location, 'here');
      mkdirSync(join(root, 'main'), { recursive: true });
      const plant = (name: string, ageMs: number) => {
        const path = join(root, 'main', name);
        writeFileSync(path, '');
        const time = new Date(Date.now() - ageMs);
        utimesSync(path, time, time);
        return path;
      };
      const ownName = spareFileName();
      // The shape older versions and tools recognize spares by.
      expect(ownName).toMatch(/^\.spare\.\d+\.[0-9a-f]{8}\.tmp$/);
      expect(parseSpareFileName(ownName)?.pid).toBe(process.pid);
      const digits = writerNameDigits();
      const elsewhere = `${(Number.parseInt(digits.slice(0, 5), 16) ^ 1).toString(16).padStart(5, '0')}${digits.slice(5)}`;
      const deadHere = plant(`.spare.${deadPid}.${digits}.tmp`, 1000);
      const deadElsewhere = plant(`.spare.${deadPid}.${elsewhere}.tmp`, 1000);
      const liveHere = plant(`.spare.${process.ppid}.${writerNameDigits()}.tmp`, 60 * 60 * 1000);
      // This pid, from before this process started: a killed predecessor that had the same pid.
      const predecessor = plant(spareFileName(), 60 * 60 * 1000);
      const own = plant(spareFileName(), 0);
      // Temp files of a group of writes carry the same tag: a second old, whatever they hold.
      const id = '20200101T000000000-0000abcd';
      const ownTemp = tempFileName(id);
      expect(ownTemp).toMatch(/^\.20200101T000000000-0000abcd\.\d+\.[0-9a-f]{8}\.tmp$/);
      expect(ownTemp.split('.').at(-2)?.slice(0, 5)).toBe(digits.slice(0, 5));
      const tempDeadHere = plant(`.${id}.${deadPid}.${writerNameDigits()}.tmp`, 1000);
      const tempDeadElsewhere = plant(`.${id}.${deadPid}.${elsewhere}.tmp`, 1000);
      const tempLiveHere = plant(`.${id}.${process.ppid}.${writerNameDigits()}.tmp`, 60 * 60 * 1000);
      const tempPredecessor = plant(tempFileName(id), 60 * 60 * 1000);
      const tempOwn = plant(tempFileName(id), 0);
      await new JsonProvider().list(root);
      expect(existsSync(deadHere)).toBe(false);
      expect(existsSync(predecessor)).toBe(false);
      expect(existsSync(deadElsewhere)).toBe(true);
      expect(existsSync(liveHere)).toBe(true);
      expect(existsSync(own)).toBe(true);
      expect(existsSync(tempDeadHere)).toBe(false);
      expect(existsSync(tempPredecessor)).toBe(false);
      expect(existsSync(tempDeadElsewhere)).toBe(true);
      expect(existsSync(tempLiveHere)).toBe(true);
      expect(existsSync(tempOwn)).toBe(true);
    },
  );
});
