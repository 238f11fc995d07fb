// The runtime's own copy of zod: the bench does not depend on zod, and a tool schema must be one the
// runtime accepts. zod 4 recognizes its schemas by their traits, so a bundled child (which carries
// its own copy of the runtime's zod) accepts a schema made by this copy too.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { defineTool } from '@crewline/runtime';

/** A tool input schema as `defineTool` takes it. */
export type ToolSchema = Parameters<typeof defineTool>[0]['inputSchema'];

/** The few zod builders the bench uses. */
export interface BenchZod {
  object(shape: Record<string, unknown>): ToolSchema;
  string(): unknown;
}

/** Loads zod from the runtime package's dependencies (resolved with the `@crewline/source` condition). */
export async function runtimeZod(): Promise<BenchZod> {
  const runtimeEntry = fileURLToPath(import.meta.resolve('@crewline/runtime'));
  const zodPackage = createRequire(runtimeEntry).resolve('zod/package.json');
  const module = (await import(pathToFileURL(join(dirname(zodPackage), 'index.js')).href)) as { z: BenchZod };
  return module.z;
}
