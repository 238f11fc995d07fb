import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventBus } from '@crewline/events';
import { Flow, listen, start } from '@crewline/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTmuxSessions } from '../test-support/tmux-browser.js';
import { hasTmux } from '../test-support/tmux-session.js';

// A project inside this package, so that its crewline.config.ts resolves @crewline/runtime: the
// browser's process registers the flow from it to resume it.
const packageModules = fileURLToPath(new URL('../../node_modules/', import.meta.url));

const flowSource = `import { Flow, listen, start } from '@crewline/runtime';

export class ApprovalFlow extends Flow<{ verdict: string }> {
  initialState = { verdict: '' };

  @start() draft() {
    return 'a short essay';
  }

  @listen('draft') async approve(draft: string) {
    this.state.verdict = await this.ask(\`Publish "\${draft}" today?\`);
    return this.state.verdict;
  }

  @listen('approve') publish(verdict: string) {
    return verdict === 'yes' ? 'PUBLISHED' : 'DISCARDED';
  }
}
`;

const config = `import { defineConfig } from '@crewline/runtime';
import { ApprovalFlow } from './approval-flow.js';

export default defineConfig({ flows: { ApprovalFlow } });
`;

/** The flow above, in this process, to write the paused checkpoint. */
class ApprovalFlow extends Flow<{ verdict: string }> {
  initialState = { verdict: '' };

  @start() draft() {
    return 'a short essay';
  }

  @listen('draft') async approve(draft: string) {
    this.state.verdict = await this.ask(`Publish "${draft}" today?`);
    return this.state.verdict;
  }

  @listen('approve') publish(verdict: string) {
    return verdict === 'yes' ? 'PUBLISHED' : 'DISCARDED';
  }
}

// Trial (flows) 14a: the Overview of a flow_paused checkpoint did not say what the flow waits for.
describe.skipIf(!hasTmux)('the browser on a paused flow (tmux)', () => {
  let project: string;
  let pausedId: string;
  const openSession = useTmuxSessions();

  beforeAll(async () => {
    await mkdir(packageModules, { recursive: true });
    project = await mkdtemp(join(packageModules, '.crewline-paused-flow-'));
    await writeFile(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(join(project, 'approval-flow.ts'), flowSource);
    await writeFile(join(project, 'crewline.config.ts'), config);
    const result = await new ApprovalFlow({
      bus: new EventBus(),
      checkpoint: { location: join(project, '.checkpoints') },
    }).kickoff();
    if (result.status !== 'paused' || !result.pause.resumeFrom) throw new Error('expected a pause');
    const reference = result.pause.resumeFrom;
    pausedId = reference.slice(reference.lastIndexOf('/') + 1).split('_')[0]!;
  });
  afterAll(async () => {
    if (project !== undefined) await rm(project, { recursive: true, force: true });
  });

  it('shows in the Overview the question the flow waits on and how to answer it', async () => {
    const session = openSession(['checkpoint'], {
      cwd: project,
      width: 140,
      height: 30,
      env: { NO_COLOR: '1' },
    });
    const text = await session.waitForScreen(
      (current) => current.includes('[Overview]') && current.includes(pausedId),
      'the paused checkpoint',
    );
    expect(text).toContain('waits for an answer in approve: Publish "a short essay" today?');
    expect(text).toContain('to answer: e resume asks the question again, then a types the answer');
    // And so it goes: e resumes (no edits: Enter confirms), the flow asks again, a takes the answer.
    await session.send('e', 'Enter');
    await session.waitForScreen(
      (current) => current.includes('a: answer and continue'),
      'the question again',
    );
    await session.send('a');
    await session.type('yes');
    await session.send('Enter');
    await session.waitForScreen(
      (current) => current.includes('PUBLISHED'),
      'the flow to finish with the answer',
    );
    await session.send('Escape');
    await session.waitForScreen((current) => current.includes('[Overview]'), 'the checkpoints again');
    await session.send('q');
    expect(await session.exitStatus()).toBe('0');
  });
});
