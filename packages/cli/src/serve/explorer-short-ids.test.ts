import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocation } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { type Fixture, type FixtureKind, writeFixture } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import type { CheckpointComparison } from './checkpoint-comparison.js';
import type { CheckpointDetail } from './checkpoint-detail.js';
import { type RunningExplorer, startExplorer } from './explorer-server.js';

// The ids `crewline checkpoint list` prints (its PARENT column's short ids, a unique prefix) name
// checkpoints in the explorer's API as they do in the CLI: before, only the full id did (404).
describe.each<FixtureKind>(['json', 'sqlite'])('the explorer API takes short ids (%s)', (kind) => {
  let directory: Awaited<ReturnType<typeof temporaryDirectory>>;
  let fixture: Fixture;
  let explorer: RunningExplorer;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    directory = await temporaryDirectory('crewline-serve-short-');
    fixture = await writeFixture(kind, directory.path);
    explorer = await startExplorer({
      opened: await openLocation(fixture.location, directory.path, registry),
      providers: registry,
      cwd: directory.path,
    });
  });
  afterAll(async () => {
    await explorer?.close();
    await fixture?.provider.close?.();
    await registry.close();
    await directory?.remove();
  });

  const get = (path: string) =>
    fetch(`http://127.0.0.1:${explorer.port}${path}`, { headers: { 'x-crewline-token': explorer.token } });

  it('a unique short id or prefix shows that checkpoint; its events and a diff take them too', async () => {
    const target = fixture.fork;
    let sequence = 0;
    for (const short of [target.id.slice(-8), target.id.slice(-8, -3), target.id.slice(0, -2), target.id]) {
      const response = await get(`/api/checkpoints/${short}`);
      expect(response.status, short).toBe(200);
      const detail = (await response.json()) as CheckpointDetail;
      expect(detail.metadata.id).toBe(target.id);
      sequence = detail.events[0]!.sequence;
    }
    expect((await get(`/api/checkpoints/${target.id.slice(-8)}/events/${sequence}`)).status).toBe(200);
    const first = fixture.main[0]!;
    const diff = await get(`/api/diff?a=${first.id.slice(-8)}&b=${target.id.slice(-8)}`);
    expect(diff.status).toBe(200);
    expect((await diff.json()) as CheckpointComparison).toBeDefined();
  });

  it('an ambiguous short id is 409 naming the matches; an unknown one 404', async () => {
    // Every checkpoint of the fixture was written the same day: the date prefix names them all.
    const ambiguous = await get(`/api/checkpoints/${fixture.main[0]!.id.slice(0, 8)}`);
    expect(ambiguous.status).toBe(409);
    expect(((await ambiguous.json()) as { error: string }).error).toMatch(
      /checkpoint id "\d{8}" matches \d+ checkpoints in .*; give more characters/,
    );
    expect((await get('/api/checkpoints/ffffffffff')).status).toBe(404);
  });
});
