/**
 * Messages the agent loop itself adds to a conversation (not the user's request). The offline model
 * recognises them so that its answer stays about the task, not about the loop's instruction.
 */
export const FINAL_ANSWER_REQUEST =
  'You have reached the maximum number of steps. Do not call any more tools: give your best final answer now, using what you have found so far.';

/** Start of the message that asks, once, for a structured answer again. */
export const CORRECTION_PREFIX = 'Your previous answer could not be used:';

export function isControlMessage(text: string): boolean {
  return text.startsWith(FINAL_ANSWER_REQUEST) || text.startsWith(CORRECTION_PREFIX);
}
