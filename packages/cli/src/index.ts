// The public surface of @crewline/cli besides the `crewline` binary: running a command in-process.
export type { CommandDefinition } from './commands/command.js';
export { commands } from './commands/registry.js';
export type { CliContext, TextSink } from './core/cli-context.js';
export { exitCodes } from './core/error-boundary.js';
export { processContext, runCli } from './main.js';
