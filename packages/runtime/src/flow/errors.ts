import { CrewlineError, type CrewlineErrorCode, type CrewlineErrorOptions } from '@crewline/events';

export const flowComponent = 'flow';

/** A `CrewlineError` from the flow engine: `[flow] <message>`. */
export function flowError(
  code: CrewlineErrorCode,
  message: string,
  options?: CrewlineErrorOptions,
): CrewlineError {
  return new CrewlineError(flowComponent, code, message, options);
}

/**
 * Thrown when one method of a flow has run `maxMethodCalls` times in one kickoff: almost always a
 * router cycle that never takes its exit. `details` carries `flowName`, `methodName` and `limit`.
 */
export class FlowMethodCallLimitError extends CrewlineError {
  readonly methodName: string;
  readonly limit: number;

  constructor(flowName: string, methodName: string, limit: number) {
    super(
      flowComponent,
      'invalid_state',
      `flow "${flowName}": method "${methodName}" ran ${limit} times (maxMethodCalls); a cycle probably never takes its exit route — fix the router, or raise maxMethodCalls in the flow options`,
      { details: { flowName, methodName, limit } },
    );
    this.name = 'FlowMethodCallLimitError';
    this.methodName = methodName;
    this.limit = limit;
  }
}
