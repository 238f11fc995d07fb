import type { CliContext } from '../core/cli-context.js';
import { runContinueCommand } from './continue-command.js';

/** `crewline checkpoint fork [REF] [--branch B]`. */
export function run(args: readonly string[], context: CliContext): Promise<number> {
  return runContinueCommand('fork', args, context);
}
