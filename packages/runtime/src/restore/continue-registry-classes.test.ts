import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Flow, listen, start } from '../flow/index.js';
import { ProjectRegistry, projectRegistry, registerProject } from '../project-config/project-config.js';
import { captureLogs, type LogCapture } from '../testing/capture-logs.js';
import { continueFromCheckpoint } from './continue-from-checkpoint.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-continue-classes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let logs: LogCapture;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => logs.stop());

class Money {
  constructor(readonly cents: number) {}
  format(): string {
    return `${(this.cents / 100).toFixed(2)} EUR`;
  }
}

class Till extends Flow<{ price: Money | null }> {
  initialState = { price: null as Money | null };

  @start() quote() {
    this.state.price = new Money(250);
    return new Money(100);
  }

  @listen('quote') charge(fee: Money) {
    return `${fee.format()} + ${(this.state.price as Money).format()}`;
  }
}

/**
 * The checkpoint after `quote`, written by a run that knew Money (in practice another process, whose
 * crewline.config.ts registered it): registered for the write, then taken out of this process's
 * registry again, so that only the registry given to continueFromCheckpoint knows the class.
 */
async function checkpointAfterQuote(location: string): Promise<string> {
  registerProject({ classes: [Money] });
  try {
    await new Till({
      bus: new EventBus(),
      checkpoint: { location, onEvents: ['method_execution_finished'] },
    }).kickoff();
  } finally {
    const classes = projectRegistry().classes;
    classes.splice(classes.indexOf(Money), 1);
  }
  const provider = new JsonProvider();
  const [afterQuote] = await provider.list(provider.resolveLocation(location));
  if (!afterQuote) throw new Error('expected a checkpoint after quote');
  return afterQuote.reference;
}

describe('continuing with classes given only in ContinueOptions.registry', () => {
  it('restores flow state and method outputs as instances and writes them again without a warning', async () => {
    const location = join(root, 'till');
    const reference = await checkpointAfterQuote(location);
    const result = await continueFromCheckpoint({
      reference,
      mode: 'resume',
      registry: new ProjectRegistry().register({ flows: { Till }, classes: [Money] }),
      bus: new EventBus(),
    });
    expect(result.output).toBe('1.00 EUR + 2.50 EUR');
    // The resume branches off (the checkpoint after charge exists); nothing else is logged.
    logs.expect('is not the latest of its run');
  });
});
