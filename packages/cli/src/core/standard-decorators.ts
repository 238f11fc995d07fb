import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, sep } from 'node:path';
import type { Jiti, TransformOptions, TransformResult } from 'jiti';
import type * as TypeScript from 'typescript';
import { cliError } from './cli-error.js';
import { cliVersion } from './version.js';

// A decorator is `@name` or `@(` after a token that can come before one. An import of
// '@crewline/runtime' does not match (a quote comes before it); a JSDoc `@param` does, which only
// sends the file down the slower path below, with the same result for code without decorators.
const decoratorPattern = /(?:^|[\s(){}[\];,])@(?:[\p{ID_Start}$_]|\()/mu;

const require = createRequire(import.meta.url);
let typeScript: typeof TypeScript | undefined;

/** TypeScript's compiler, required on first use only: most configs have no decorators. */
function loadTypeScript(): typeof TypeScript {
  if (typeScript === undefined) {
    try {
      typeScript = require('typescript') as typeof TypeScript;
    } catch (error) {
      throw cliError(
        'invalid_config',
        'TypeScript, which compiles the decorators of flows in crewline.config.ts, is not installed beside @crewline/cli; reinstall @crewline/cli, or run the CLI with a TypeScript loader: NODE_OPTIONS="--import tsx" crewline … (tsx keeps its own compiled copy of the config, a key written in it included, in its cache under the temporary directory; TSX_DISABLE_CACHE=1 turns that off)',
        { cause: error },
      );
    }
  }
  return typeScript;
}

/**
 * Which decorators the project asked for, and what that answer was read from: the tsconfig.json
 * TypeScript found for the file and every file it read to resolve it (its `extends` chain).
 */
interface DecoratorChoice {
  legacy: boolean;
  tsconfig: string | undefined;
  /** The digest of each file read, as it was read (null: could not be read). */
  read: Record<string, string | null>;
}

const choiceByDirectory = new Map<string, DecoratorChoice>();

/**
 * Whether the tsconfig.json that governs `filename` (its `extends` followed) turns
 * `experimentalDecorators` on: such a project asked for the older decorators, as tsc and tsx give it.
 */
function decoratorChoice(typescript: typeof TypeScript, filename: string): DecoratorChoice {
  const directory = dirname(filename);
  let choice = choiceByDirectory.get(directory);
  if (choice === undefined) {
    const read: Record<string, string | null> = {};
    const readFile = (path: string): string | undefined => {
      const text = typescript.sys.readFile(path);
      read[path] = text === undefined ? null : digest(text);
      return text;
    };
    choice = { legacy: false, tsconfig: undefined, read };
    const configPath = typescript.findConfigFile(directory, typescript.sys.fileExists);
    if (configPath !== undefined) {
      choice.tsconfig = configPath;
      const config = typescript.readConfigFile(configPath, readFile);
      if (config.error === undefined) {
        const parsed = typescript.parseJsonConfigFileContent(
          config.config,
          {
            useCaseSensitiveFileNames: typescript.sys.useCaseSensitiveFileNames,
            fileExists: typescript.sys.fileExists,
            readFile,
            // Only the options matter here, not the project's file list: no directory walk.
            readDirectory: () => [],
          },
          dirname(configPath),
        );
        choice.legacy = parsed.options.experimentalDecorators === true;
      }
    }
    choiceByDirectory.set(directory, choice);
  }
  return choice;
}

/** The tsconfig.json TypeScript would find for a file in `directory`, found without loading it. */
function nearestTsconfig(directory: string): string | undefined {
  for (let current = directory; ; current = dirname(current)) {
    const candidate = join(current, 'tsconfig.json');
    try {
      // In TypeScript's spelling (forward slashes on Windows too), which the cache entry holds.
      if (statSync(candidate).isFile()) return sep === '\\' ? candidate.replaceAll(sep, '/') : candidate;
    } catch {
      // Not here: look in the parent.
    }
    if (dirname(current) === current) return undefined;
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The digest of a file's content as TypeScript's `sys.readFile` gives it (a byte order mark
 * dropped), or null when it cannot be read (gone, or not a file).
 */
function fileDigest(path: string): string | null {
  try {
    return digest(readFileSync(path, 'utf8').replace(/^\uFEFF/, ''));
  } catch {
    return null;
  }
}

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'missing';
  }
}

/**
 * Raised by hand when the transform below changes in a way its version numbers would not show (a
 * source checkout keeps the CLI's version): entries written by an older transform are not served.
 */
const transformVersion = 4;

/**
 * What an output depends on besides the file and its source: the transform, the CLI and the two
 * compilers it runs. Read from package.json files, so a warm cache does not load TypeScript.
 */
function compilerVersions(): string {
  return `transform ${transformVersion}; cli ${cliVersion()}; jiti ${packageVersion('jiti')}; typescript ${packageVersion('typescript')}`;
}

/** The first line of a cache entry: what its code was compiled from, checked before it is served. */
interface EntryHeader {
  versions: string;
  /** The digest of the source the code below the header was compiled from. */
  source: string;
  /** Set for a file with decorators: the tsconfig.json found for it and the files read to decide. */
  decorators?: { tsconfig: string | null; read: Record<string, string | null> };
}

/**
 * Compiled files on disk, one entry per file and set of transform options. jiti's own cache is keyed
 * by the file's path and source only, while the output here also depends on the project's tsconfig
 * (legacy or standard decorators) and on the versions of the CLI, jiti and TypeScript: an entry is
 * served only when all of them and the file's source are as they were when it was written. The
 * directory is the project's node_modules/.cache/crewline (see compiledCacheDirectory; none is used
 * when it cannot be, and nothing is cached): the code is kept as compiled, a key written inline in
 * the config included, beside jiti's and Babel's caches.
 */
class CompiledFiles {
  private readonly versions = compilerVersions();

  constructor(private readonly directory: string) {}

  private entryPath(options: TransformOptions): string {
    const { source: _source, ...rest } = options;
    const name = basename(options.filename ?? 'module').replace(/[^\w.-]/g, '_');
    return join(this.directory, `${name}.${digest(JSON.stringify(rest)).slice(0, 24)}.js`);
  }

  /** The cached code for these options, or undefined when there is none or it is out of date. */
  read(options: TransformOptions): string | undefined {
    let text: string;
    try {
      text = readFileSync(this.entryPath(options), 'utf8');
    } catch {
      return undefined;
    }
    const newline = text.indexOf('\n');
    if (newline < 0) return undefined;
    let header: EntryHeader;
    try {
      header = JSON.parse(text.slice(0, newline)) as EntryHeader;
    } catch {
      return undefined;
    }
    if (header.versions !== this.versions || header.source !== digest(options.source)) return undefined;
    if (header.decorators !== undefined) {
      const found = nearestTsconfig(dirname(options.filename ?? '.')) ?? null;
      if (found !== header.decorators.tsconfig) return undefined;
      for (const [path, expected] of Object.entries(header.decorators.read)) {
        if (fileDigest(path) !== expected) return undefined;
      }
    }
    return text.slice(newline + 1);
  }

  /** Stores code, written whole under a temporary name first: a concurrent command reads all or none. */
  write(options: TransformOptions, code: string, choice: DecoratorChoice | undefined): void {
    const header: EntryHeader = { versions: this.versions, source: digest(options.source) };
    if (choice !== undefined) {
      header.decorators = {
        tsconfig: choice.tsconfig ?? null,
        read: choice.read,
      };
    }
    const path = this.entryPath(options);
    const temporary = `${path}.${randomUUID()}.tmp`;
    try {
      writeFileSync(temporary, `${JSON.stringify(header)}\n${code}`, { mode: 0o600 });
      renameSync(temporary, path);
    } catch {
      // The cache only saves time: a file that could not be stored is compiled again next time.
      rmSync(temporary, { force: true });
    }
  }
}

/**
 * A jiti `transform` that compiles TypeScript files with standard decorators (TypeScript 5.2+, with
 * their metadata), and leaves everything else to jiti's own transform, `plain`.
 *
 * jiti's Babel transform always compiles decorators in the legacy (`experimentalDecorators`) form,
 * which gives a decorator no `context.metadata`: a Flow class then fails with "decorator metadata is
 * missing". A file with decorators is therefore compiled by TypeScript first (types removed,
 * decorators lowered as tsc does it, `import`/`export` kept), and jiti's transform then turns the
 * resulting JavaScript into the module it evaluates, exactly as for any other file. A project whose
 * tsconfig.json turns `experimentalDecorators` on keeps jiti's legacy form, as tsc and tsx would.
 *
 * @param plain a jiti instance with its own cache off, whose transform does the rest.
 * @param cacheDirectory where compiled files are kept between commands (see CompiledFiles); with
 * none (the default), every file is compiled each time. The jiti instance this transform is given to
 * must have `fsCache: false`: jiti's own cache would serve an output whatever tsconfig.json says now.
 */
export function standardDecoratorsTransform(
  plain: Jiti,
  cacheDirectory?: string,
): (options: TransformOptions) => TransformResult {
  const cache = cacheDirectory === undefined ? undefined : new CompiledFiles(cacheDirectory);
  return (options) => {
    const cached = cache?.read(options);
    if (cached !== undefined) return { code: cached };
    const { code, choice } = compile(plain, options);
    // Like jiti's own cache: a file that failed to compile is not stored, so its error is shown again.
    if (!code.includes('__JITI_ERROR__')) cache?.write(options, code, choice);
    return { code };
  };
}

/** Compiles one file; `choice` is set when the project's decorator choice was read for it. */
function compile(plain: Jiti, options: TransformOptions): { code: string; choice?: DecoratorChoice } {
  if (!options.ts || !decoratorPattern.test(options.source)) return { code: plain.transform(options) };
  const typescript = loadTypeScript();
  const filename = options.filename ?? 'module.ts';
  const choice = decoratorChoice(typescript, filename);
  if (choice.legacy) return { code: plain.transform(options), choice };
  const output = typescript.transpileModule(options.source, {
    fileName: filename,
    reportDiagnostics: true,
    compilerOptions: {
      target: typescript.ScriptTarget.ES2022,
      // Keeps `import`, `export` and `import x = require()` as written: jiti turns them into its
      // module form next, as it does for JavaScript files.
      module: typescript.ModuleKind.Preserve,
      experimentalDecorators: false,
      useDefineForClassFields: true,
      jsx: typescript.JsxEmit.Preserve,
      inlineSourceMap: false,
      sourceMap: false,
    },
  });
  // A syntax error is reported by jiti's own transform, with the line and column it gives for any file.
  const failed = output.diagnostics?.some(
    (diagnostic) => diagnostic.category === typescript.DiagnosticCategory.Error,
  );
  if (failed) return { code: plain.transform(options), choice };
  return { code: plain.transform({ ...options, source: output.outputText, ts: false }), choice };
}
