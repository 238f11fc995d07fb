import { redactSecretsInText } from '@crewline/events';
import { toJsonSafe } from '@crewline/runtime-state';
import type { CrewlineTool, ToolExecutionContext } from './define-tool.js';

/** How one tool call ended. Failures are values: the loop turns them into results the model reads. */
export type ToolRunOutcome =
  | { status: 'succeeded'; output: unknown }
  | { status: 'unknown_tool'; message: string }
  | { status: 'invalid_input'; message: string }
  | { status: 'failed'; message: string; error: unknown };

function describeIssues(error: {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}): string {
  return error.issues
    .map(
      (issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(input)'}: ${issue.message}`,
    )
    .join('; ');
}

/** Validates the input with the tool's schema, then executes it; never throws. */
export async function runTool(
  toolName: string,
  tool: CrewlineTool | undefined,
  input: unknown,
  context: ToolExecutionContext,
  availableNames: readonly string[],
  onStart?: (input: unknown) => void,
): Promise<ToolRunOutcome> {
  if (tool === undefined) {
    const names = availableNames.length > 0 ? availableNames.join(', ') : 'none';
    return {
      status: 'unknown_tool',
      message: `there is no tool named "${toolName}"; available tools: ${names}`,
    };
  }
  const parsed = await tool.inputSchema.safeParseAsync(input);
  if (!parsed.success) {
    return {
      status: 'invalid_input',
      message: `invalid input for tool "${toolName}": ${describeIssues(parsed.error)}`,
    };
  }
  onStart?.(parsed.data);
  try {
    const output = await tool.execute(parsed.data, context);
    return { status: 'succeeded', output: toJsonSafe(output) };
  } catch (error) {
    const message = redactSecretsInText(error instanceof Error ? error.message : String(error));
    return { status: 'failed', message: `tool "${toolName}" failed: ${message}`, error };
  }
}
