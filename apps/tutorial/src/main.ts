// `pnpm demo`: the tutorial "Resume a failing crew". See ../README.md.
import { exitCodes } from '@crewline/cli';
import { CrewlineError } from '@crewline/events';
import { parseTutorialOptions } from './options.js';
import { runTutorial } from './tutorial.js';

// pnpm runs package scripts inside the package directory; INIT_CWD is where the command was typed.
// Working from there puts ./.checkpoints (and every relative path the demo prints or accepts) where
// the user expects it, so the printed commands work when pasted into the same terminal.
const baseDirectory = process.env.INIT_CWD ?? process.cwd();
process.chdir(baseDirectory);

try {
  const options = parseTutorialOptions(process.argv.slice(2), process.env);
  process.exitCode = await runTutorial(options, { stdout: process.stdout, env: process.env, baseDirectory });
} catch (error) {
  if (CrewlineError.isInstance(error)) {
    process.stderr.write(`demo: ${error.message}\n`);
    // The exit codes of crewline itself: a mistake in how the demo was called is a usage error, 2.
    process.exitCode =
      CrewlineError.hasCode(error, 'invalid_argument') || CrewlineError.hasCode(error, 'invalid_name')
        ? exitCodes.usage
        : exitCodes.failed;
  } else {
    process.stderr.write(`demo: unexpected error: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = exitCodes.internal;
  }
}
