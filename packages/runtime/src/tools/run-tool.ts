import { CrewlineError, redactSecretsInText } from '@crewline/events';
import { toJsonSafe } from '@crewline/runtime-state';
import { describeIssues } from '../schema/standard-schema.js';
import type { CrewlineTool, ToolExecutionContext } from './define-tool.js';

/** How one tool call ended. Failures are values: the loop turns them into results the model reads. */
export type ToolRunOutcome =
  | { status: 'succeeded'; output: unknown }
  | { status: 'unknown_tool'; message: string }
  | { status: 'invalid_input'; message: string }
  | { status: 'failed'; message: string; error: unknown };

/**
 * True when a tool stopped because work was aborted rather than because it failed: the run's signal
 * is aborted, a nested crewline run was aborted (a delegation), or the tool threw an `AbortError`.
 */
export function isAbort(error: unknown, abortSignal: AbortSignal | undefined): boolean {
  if (abortSignal?.aborted) return true;
  if (CrewlineError.hasCode(error, 'aborted')) return true;
  return error instanceof Error && error.name === 'AbortError';
}

/**
 * Validates the input with the tool's schema, then executes it. Failures are outcomes; only an abort
 * ({@link isAbort}) is thrown, so that aborted work is continued on resume instead of being saved as
 * a failed result.
 */
export async function runTool(
  toolName: string,
  tool: CrewlineTool | undefined,
  input: unknown,
  context: ToolExecutionContext,
  availableNames: readonly string[],
  onStart?: (input: unknown) => unknown,
): Promise<ToolRunOutcome> {
  if (tool === undefined) {
    const names = availableNames.length > 0 ? availableNames.join(', ') : 'none';
    return {
      status: 'unknown_tool',
      message: `there is no tool named "${toolName}"; available tools: ${names}`,
    };
  }
  const parsed = await tool.inputSchema['~standard'].validate(input);
  if (parsed.issues) {
    return {
      status: 'invalid_input',
      message: `invalid input for tool "${toolName}": ${describeIssues(parsed.issues, '(input)')}`,
    };
  }
  await onStart?.(parsed.value);
  try {
    const output = await tool.execute(parsed.value, context);
    return { status: 'succeeded', output: toJsonSafe(output) };
  } catch (error) {
    if (isAbort(error, context.abortSignal)) throw error;
    const message = redactSecretsInText(error instanceof Error ? error.message : String(error));
    return { status: 'failed', message: `tool "${toolName}" failed: ${message}`, error };
  }
}
