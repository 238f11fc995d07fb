import { shellWord } from '@crewline/runtime-state/internal';

/** What the run was started with beyond its checkpoint: said again in the command that starts it over. */
export interface StartOverFlags {
  /** Fork only: the branch the run was to write (`--branch`). */
  branch?: string;
  /** Edited kickoff inputs as `--input` takes them: `key=value` or `key:=<json>`. */
  inputs?: readonly string[];
  /** Replaced task outputs as `--set-output` takes them: `N=text`, N the task number `info` shows. */
  outputs?: readonly string[];
  /** The answer given to a paused flow (`--answer`). */
  answer?: string;
}

/**
 * The longest edits (`--input`, `--set-output`, `--answer` words together) a hint repeats: a model's
 * whole research pasted into one command line is neither read nor copied whole from a terminal.
 */
export const longestRepeatedEdits = 1000;

/** Edits a hint repeats only when a terminal shows them as typed: no control character but a line feed. */
function sayable(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
  return !/[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/.test(text);
}

/**
 * The command that starts a run over from its checkpoint, with the flags it was started with: edits
 * made in a browser (the terminal UI, the explorer) live in its memory only, so a hint without them
 * started the run on the original outputs, paying for calls on what the user meant to replace. Edits
 * too long (or unprintable) for one command line are not repeated: the hint then says they must be
 * given again.
 */
export function startOverCommand(options: {
  /** How the CLI is named in hints (`crewline`, `pnpm crewline`, `npx crewline`). */
  command: string;
  mode: 'resume' | 'fork' | 'rerun';
  /** The checkpoint's short id. */
  from: string;
  /** The location, as the user reads it (relative to the working directory). */
  location: string;
  flags?: StartOverFlags;
}): string {
  const { command, left, why } = startOverWords(options);
  return left.length === 0
    ? command
    : `${command}; the edits it ran with (${left.join(', ')}) are not saved anywhere and ${why} to repeat here: give them again`;
}

function startOverWords(options: Parameters<typeof startOverCommand>[0]): {
  command: string;
  left: string[];
  /** Why `left` are not repeated: too long, or holding characters a command line does not show. */
  why?: string;
} {
  const { flags = {} } = options;
  const base = `${options.command} checkpoint ${options.mode} ${options.from} --location ${shellWord(options.location)}${
    flags.branch === undefined ? '' : ` --branch ${shellWord(flags.branch)}`
  }`;
  const edits = [
    ...(flags.outputs ?? []).map((output) => ['--set-output', output] as const),
    ...(flags.inputs ?? []).map((input) => ['--input', input] as const),
    ...(flags.answer === undefined ? [] : [['--answer', flags.answer] as const]),
  ];
  if (edits.length === 0) return { command: base, left: [] };
  // A value starting with a dash (an answer "-1") is given as `--flag=value`: after a space the
  // command line takes it for a flag, quoted or not.
  const words = edits
    .map(([flag, value]) =>
      value.startsWith('-') ? shellWord(`${flag}=${value}`) : `${flag} ${shellWord(value)}`,
    )
    .join(' ');
  const printable = edits.every(([, value]) => sayable(value));
  if (words.length <= longestRepeatedEdits && printable) return { command: `${base} ${words}`, left: [] };
  return {
    command: base,
    left: [...new Set(edits.map(([flag]) => flag))],
    why: printable ? 'too long' : 'hold characters a command line does not show (a tab, a carriage return)',
  };
}
