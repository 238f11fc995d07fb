import type { CliContext } from '../core/cli-context.js';
import { runContinueCommand } from './continue-command.js';

/** `crewline checkpoint resume [REF]`. */
export function run(args: readonly string[], context: CliContext): Promise<number> {
  return runContinueCommand('resume', args, context);
}
