import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { Jiti, TransformOptions, TransformResult } from 'jiti';
import type * as TypeScript from 'typescript';
import { cliError } from './cli-error.js';

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
        'TypeScript, which compiles the decorators of flows in crewline.config.ts, is not installed beside @crewline/cli; reinstall @crewline/cli, or run the CLI with a TypeScript loader: NODE_OPTIONS="--import tsx" crewline …',
        { cause: error },
      );
    }
  }
  return typeScript;
}

const legacyByDirectory = new Map<string, boolean>();

/**
 * Whether the tsconfig.json that governs `filename` (its `extends` followed) turns
 * `experimentalDecorators` on: such a project asked for the older decorators, as tsc and tsx give it.
 */
function projectUsesLegacyDecorators(typescript: typeof TypeScript, filename: string): boolean {
  const directory = dirname(filename);
  let legacy = legacyByDirectory.get(directory);
  if (legacy === undefined) {
    legacy = false;
    const configPath = typescript.findConfigFile(directory, typescript.sys.fileExists);
    if (configPath !== undefined) {
      const read = typescript.readConfigFile(configPath, typescript.sys.readFile);
      if (read.error === undefined) {
        const parsed = typescript.parseJsonConfigFileContent(
          read.config,
          {
            useCaseSensitiveFileNames: typescript.sys.useCaseSensitiveFileNames,
            fileExists: typescript.sys.fileExists,
            readFile: typescript.sys.readFile,
            // Only the options matter here, not the project's file list: no directory walk.
            readDirectory: () => [],
          },
          dirname(configPath),
        );
        legacy = parsed.options.experimentalDecorators === true;
      }
    }
    legacyByDirectory.set(directory, legacy);
  }
  return legacy;
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
 */
export function standardDecoratorsTransform(plain: Jiti): (options: TransformOptions) => TransformResult {
  return (options) => {
    if (!options.ts || !decoratorPattern.test(options.source)) return { code: plain.transform(options) };
    const typescript = loadTypeScript();
    const filename = options.filename ?? 'module.ts';
    if (projectUsesLegacyDecorators(typescript, filename)) return { code: plain.transform(options) };
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
    if (failed) return { code: plain.transform(options) };
    return { code: plain.transform({ ...options, source: output.outputText, ts: false }) };
  };
}
