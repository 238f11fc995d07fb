// `pnpm crewline` runs in the caller's directory (INIT_CWD), where a bare `--import tsx` is looked up
// and not found unless that directory happens to have tsx installed. Imported by absolute path, this
// file resolves tsx from the repository instead, whatever the working directory. Its path has a `tsx`
// folder so that the CLI's check for a TypeScript loader (project-config.ts) still recognises it.
import 'tsx';
