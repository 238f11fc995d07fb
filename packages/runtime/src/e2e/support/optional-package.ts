/** Imports a module given at run time (so TypeScript does not need it installed). */
export type ModuleImporter = (specifier: string) => Promise<unknown>;

const importModule: ModuleImporter = (specifier) => import(/* @vite-ignore */ specifier);

/**
 * True when `error` says that the package `specifier` itself is not installed — not one of its own
 * dependencies, not a native module that failed to load, not an error thrown while evaluating it.
 */
export function isMissingPackage(error: unknown, specifier: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    (message.includes(`'${specifier}'`) || message.includes(`"${specifier}"`))
  );
}

/**
 * Imports an optional package for tests that need it: `undefined` only when the package is not
 * installed (the caller skips those tests and says why); any other failure to load it — a broken
 * build, a missing native module — is thrown, so the tests fail instead of silently skipping.
 */
export async function importIfInstalled<T>(
  specifier: string,
  importer: ModuleImporter = importModule,
): Promise<T | undefined> {
  try {
    return (await importer(specifier)) as T;
  } catch (error) {
    if (isMissingPackage(error, specifier)) return undefined;
    throw error;
  }
}
