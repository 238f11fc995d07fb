// How the explorer's API reads a request body: JSON, and no larger than it takes. Split from
// explorer-server.ts.
import { bodyLimit } from 'hono/body-limit';
import { cliError, usageError } from '../core/cli-error.js';

/** The largest request body the API reads (a run request or a plan with edited outputs). */
const maxBodyBytes = 4 * 1024 * 1024;

/** Refuses a body over {@link maxBodyBytes} with 413 and a message naming the limit. */
export const limitBody = bodyLimit({
  maxSize: maxBodyBytes,
  onError: (context) =>
    context.json(
      {
        error: cliError(
          'too_large',
          `checkpoint serve: the request body is over the explorer's limit of 4 MiB (${maxBodyBytes} bytes); send shorter inputs and task outputs`,
        ).message,
      },
      413,
    ),
});

/** The request's body read as JSON; a usage error when it is not. */
export async function jsonBody(request: { json(): Promise<unknown> }): Promise<unknown> {
  try {
    return await request.json();
  } catch {
    throw usageError('the request body must be JSON');
  }
}
