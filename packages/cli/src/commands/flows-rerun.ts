import { parseCommandArguments } from '../core/args.js';
import type { CliContext } from '../core/cli-context.js';
import { usageError } from '../core/cli-error.js';
import { continueRun } from '../core/continue-run.js';
import { entityLabel } from '../core/entity-label.js';
import { printable } from '../core/format.js';
import { reportInterrupt } from '../core/interrupt-report.js';
import { jsonDocument } from '../core/json-output.js';
import { displayPath } from '../core/location.js';
import { openLocation } from '../core/open-location.js';
import { loadProject } from '../core/project-config.js';
import { providersOf } from '../core/providers.js';

/**
 * `crewline checkpoint flows rerun <STATE ID> --from <METHOD>`: runs that method of a saved flow
 * state again, and everything after it, from the state's save made before the method (the runtime's
 * `findRerunPoint`, the same as `kickoff({ inputs: { id }, rerunFrom })`).
 */
export async function runRerun(args: readonly string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    'checkpoint flows rerun',
    args,
    {
      from: { type: 'string' },
      location: { type: 'string' },
      flow: { type: 'string' },
      quiet: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    1,
  );
  const stateId = positionals[0];
  if (stateId === undefined)
    throw usageError('give the state id to re-run (`crewline checkpoint flows` lists them)');
  const method = values.from;
  if (method === undefined || method.length === 0)
    throw usageError('give the method to re-run from with --from <method>, e.g. --from draft');
  // The project's registrations come first: a broken config is reported before anything runs.
  await loadProject(context.cwd);
  const providers = await providersOf(context);
  const opened = await openLocation(values.location, context.cwd, providers);
  const { findRerunPoint } = await import('@crewline/runtime');
  const point = await findRerunPoint(opened.location, stateId, method, {
    provider: opened.provider,
    ...(values.flow !== undefined ? { flowName: values.flow } : {}),
  });
  const out = values.json ? () => undefined : (line: string) => context.stdout.write(printable(`${line}\n`));
  out(`Re-running flow state ${stateId} from ${method}`);
  out(
    `  restoring ${displayPath(point.reference, context.cwd)} (completed: ${point.completedMethods.join(', ') || 'nothing'})`,
  );
  // Ctrl+C says where the re-run stopped and how to continue it, as resume and fork do.
  const interruptReport = reportInterrupt({
    mode: 'rerun',
    from: point.checkpointId,
    cwd: context.cwd,
    stderr: context.stderr,
    onWayOut: () => providers.closeNow(),
  });
  const outcome = await continueRun({
    reference: point.reference,
    mode: 'resume',
    // Its later saves go on a branch of their own, which it says itself ("forked onto branch …").
    expectNewBranch: true,
    cwd: context.cwd,
    providers,
    width: Math.max(60, Math.min(context.stdout.columns ?? 100, 160)),
    ...(values.quiet || values.json ? {} : { onLine: (line: string) => out(`  ${line}`) }),
    onCheckpoint: (checkpoint) => interruptReport.noteCheckpoint(checkpoint),
  }).finally(() => interruptReport.stop());
  if (values.json) {
    context.stdout.write(
      jsonDocument({
        stateId,
        from: method,
        restored: point.reference,
        kind: outcome.kind,
        name: outcome.name,
        branch: outcome.branch,
        lastCheckpoint: outcome.lastCheckpoint ?? null,
        output: outcome.output,
        pause: outcome.pause ?? null,
      }),
    );
    return 0;
  }
  if (outcome.pause) {
    out(
      `Paused: ${outcome.name} waits for an answer in ${outcome.pause.methodName}: ${outcome.pause.message}`,
    );
    return 0;
  }
  out(
    `Finished ${entityLabel(outcome.kind, outcome.name)} on branch ${outcome.branch}${
      outcome.lastCheckpoint ? `; last checkpoint ${displayPath(outcome.lastCheckpoint, context.cwd)}` : ''
    }`,
  );
  out('Output:');
  out(outcome.output.length > 0 ? outcome.output : '(empty)');
  return 0;
}
