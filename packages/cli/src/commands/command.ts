import type { CliContext } from '../core/cli-context.js';

/** What every command module exports: run with the arguments after its name; resolves to the exit code. */
export type CommandRun = (args: readonly string[], context: CliContext) => Promise<number>;

export interface CommandModule {
  run: CommandRun;
}

/** A command as listed in help. The module is imported only when the command runs. */
export interface CommandDefinition {
  name: string;
  aliases?: readonly string[];
  summary: string;
  usage: string;
  /** Called as `crewline <name>` (not a `checkpoint` subcommand): the worker and the queue of runs. */
  topLevel?: boolean;
  /**
   * True when the command (given the arguments after its name) only reads and prints: a closed
   * stdout (`crewline list | head`) ends it at once, quietly. Default false: a command that runs a
   * crew or flow or changes storage is never cut off by its reader going away; its output is dropped
   * and it ends with its own status.
   */
  onlyPrints?: boolean | ((args: readonly string[]) => boolean);
  load(): Promise<CommandModule>;
}
