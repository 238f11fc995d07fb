import { isCrewlineError } from '../core/error-boundary.js';

/**
 * The HTTP status of an API request that failed with `error`: the caller's mistake (4xx) by the
 * error's code (an ambiguous short id 409), a checkpoint that exists but cannot be read 422 (the server works; that document
 * does not), anything else 500.
 */
export function statusOf(error: unknown): 400 | 404 | 409 | 422 | 500 {
  if (!isCrewlineError(error)) return 500;
  switch (error.code) {
    case 'invalid_argument':
      return 400;
    case 'not_found':
      return 404;
    // A short id that names more than one checkpoint: the request conflicts with what is stored.
    case 'ambiguous_reference':
    case 'conflict':
      return 409;
    case 'corrupt_checkpoint':
    case 'unsupported_version':
    case 'too_large':
      return 422;
    default:
      return 500;
  }
}
