export type { CommandDefinition, CommandModule, CommandRun } from './commands/command.js';
export { commands, findCommand } from './commands/registry.js';
export { type CliContext, colorEnabled, type TextSink } from './core/cli-context.js';
export { describeKnownError, exitCodeFor, exitCodes, withErrorBoundary } from './core/error-boundary.js';
export {
  type CliProvidersOptions,
  cliProviderRegistry,
  closeProviders,
  providersOf,
} from './core/providers.js';
export { processContext, runCli } from './main.js';
