// Appends, for every SIGTERM the child `node` receives, how many other SIGTERM listeners the process
// has at that moment, to the file named by CREWLINE_SIGNAL_LISTENER_LOG: a test can prove a command
// answers a signal through one listener of its own, which its output cannot show. Passed with
// `--import`; plain JavaScript so that it needs no loader.
import { appendFileSync } from 'node:fs';

const logFile = process.env.CREWLINE_SIGNAL_LISTENER_LOG;
if (logFile) {
  process.prependListener('SIGTERM', () => {
    appendFileSync(logFile, `${process.listenerCount('SIGTERM') - 1}\n`);
  });
}
