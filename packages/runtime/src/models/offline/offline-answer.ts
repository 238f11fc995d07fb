import { createHash } from 'node:crypto';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { isControlMessage } from '../../agent-loop/control-messages.js';
import { lastUserText, messageText, toolOutputText } from './prompt-text.js';

/** Every offline answer starts with this, so nobody mistakes it for a real model's work. */
export const OFFLINE_MARKER = '[offline model]';

/** A hex digest of anything: the seed that makes the offline model's answers depend on the prompt only. */
export function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

const requestLabels = [
  /^\s*(?:current\s+)?task(?:\s+description)?\s*:\s*(.+)$/im,
  /^\s*description\s*:\s*(.+)$/im,
  /^\s*request\s*:\s*(.+)$/im,
];
const expectedOutputLabels = [
  /^\s*expected\s+output\s*:\s*(.+)$/im,
  /expected criteria for your final answer\s*:\s*(.+)$/im,
];

/** What the request asks for: a labelled task line when there is one, else its first non-empty line. */
export function requestSummary(prompt: LanguageModelV3Prompt, maximum = 160): string {
  const text = lastUserText(prompt);
  let summary: string | undefined;
  for (const label of requestLabels) {
    const match = label.exec(text);
    if (match?.[1]) {
      summary = match[1];
      break;
    }
  }
  summary ??= text.split('\n').find((line) => line.trim().length > 0) ?? '';
  summary = summary.trim().replace(/\s+/g, ' ');
  return summary.length > maximum ? `${summary.slice(0, maximum - 1)}…` : summary;
}

function expectedOutput(prompt: LanguageModelV3Prompt): string | undefined {
  const text = lastUserText(prompt);
  for (const label of expectedOutputLabels) {
    const match = label.exec(text)?.[1]?.trim();
    if (match) return match;
  }
  return undefined;
}

/** Tool results seen since the last user message, as `name -> value` lines, so the answer visibly uses them. */
function recentToolResults(prompt: LanguageModelV3Prompt): string[] {
  const lines: string[] = [];
  for (let index = prompt.length - 1; index >= 0; index -= 1) {
    const message = prompt[index]!;
    if (message.role === 'user' && !isControlMessage(messageText(message))) break;
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const value = toolOutputText(part.output).replace(/\s+/g, ' ');
      lines.unshift(`${part.toolName} -> ${value.length > 80 ? `${value.slice(0, 79)}…` : value}`);
    }
  }
  return lines;
}

const stopWords = new Set(
  'about above after again against because been before being below between both could does doing down during each from further have having here into itself just more most other over same should some such than that their them then there these they this those through under until very what when where which while with would your yours the and for are but not you all any can had her was one our out has his how its may new now own see who'.split(
    ' ',
  ),
);

/** Distinct content words of the request, in order of appearance. */
export function keywords(text: string, limit = 8): string[] {
  const found: string[] = [];
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_-]{3,}/gu) ?? []) {
    if (stopWords.has(word) || found.includes(word)) continue;
    found.push(word);
    if (found.length === limit) break;
  }
  return found;
}

const sentenceShapes = [
  (word: string) => `${capitalize(word)} is the first thing to settle; everything else depends on it.`,
  (word: string) => `Look at ${word} from the user's side before deciding anything.`,
  (word: string) => `A small, checkable step on ${word} beats a large guess.`,
  (word: string) => `Record what was assumed about ${word} so a later step can revisit it.`,
  (word: string) => `Compare two options for ${word} and keep the simpler one.`,
  (word: string) => `The risk around ${word} is worth one sentence in the final report.`,
];

function capitalize(word: string): string {
  return word.length === 0 ? word : word[0]!.toUpperCase() + word.slice(1);
}

const contextLabel = /(?:context you are working with|^\s*context)\s*:\s*\n?([\s\S]+)/im;

/**
 * The start of the context section of a request (earlier tasks' outputs), so an answer visibly
 * follows what it was given: edit an upstream output and the downstream answer changes with it.
 */
function contextSummary(text: string, maximum = 140): string | undefined {
  const match = contextLabel.exec(text)?.[1];
  if (!match) return undefined;
  const summary = match
    .split('\n')
    .map((line) => line.replace(OFFLINE_MARKER, '').trim())
    .filter((line) => line.length > 0)
    .join(' ')
    .replace(/\s+/g, ' ');
  if (summary.length === 0) return undefined;
  if (summary.length <= maximum) return summary;
  // A quote of the context: shortened where a word ends, and marked as shortened.
  const cut = summary.slice(0, maximum - 1);
  const wordEnd = cut.lastIndexOf(' ');
  return `${wordEnd > maximum / 2 ? cut.slice(0, wordEnd) : cut}…`;
}

export interface TextAnswerOptions {
  modelName: string;
  responseBytes: number;
}

/** The offline model's plain-text answer: honest header, the request, a structured body, exact size. */
export function textAnswer(prompt: LanguageModelV3Prompt, options: TextAnswerOptions): string {
  const summary = requestSummary(prompt);
  const seed = digest(JSON.stringify(prompt));
  const lines = [`${OFFLINE_MARKER} ${options.modelName} answering: ${summary || '(empty request)'}`];
  const format = expectedOutput(prompt);
  if (format) lines.push(`Format asked for: ${format}`);
  const context = contextSummary(lastUserText(prompt));
  if (context) lines.push(`Building on the context: ${context}`);
  const toolLines = recentToolResults(prompt);
  if (toolLines.length > 0) lines.push('Tool results used:', ...toolLines.map((line) => `- ${line}`));
  lines.push('Key points:');
  const words = keywords(summary.length > 0 ? summary : lastUserText(prompt));
  if (words.length === 0) words.push('request');
  const start = Number.parseInt(seed.slice(0, 8), 16);
  let body = lines.join('\n');
  // Whole key points only: the answer ends on a finished sentence, and a visible padding line makes
  // up the size. A gap too small for that line gives back the last key point to make room.
  const keyPointEnds: number[] = [];
  for (let point = 0; point < 10_000; point += 1) {
    const word = words[(start + point) % words.length]!;
    const shape = sentenceShapes[(start + point * 7) % sentenceShapes.length]!;
    const next = `${body}\n${point + 1}. ${shape(word)}`;
    if (Buffer.byteLength(next) > options.responseBytes) break;
    keyPointEnds.push(body.length);
    body = next;
  }
  const gap = options.responseBytes - Buffer.byteLength(body);
  if (gap > 0 && gap < PADDING_LINE_MINIMUM && keyPointEnds.length > 1)
    body = body.slice(0, keyPointEnds.at(-1));
  if (Buffer.byteLength(body) > options.responseBytes) {
    // A request summary longer than the whole answer: cut it where a sentence or word ends.
    let characters = options.responseBytes;
    while (Buffer.byteLength(cutAtSentence(body, characters)) > options.responseBytes) characters -= 1;
    body = cutAtSentence(body, characters);
  }
  return withPaddingLine(body, options.responseBytes);
}

const PADDING_LABELS = ['[offline padding', '[padding', '['];
const PADDING_LINE_MINIMUM = `\n${PADDING_LABELS[0]}]`.length;

/**
 * `body` (at most `bytes` bytes) brought to exactly `bytes` bytes with a line that says what it is,
 * `[offline padding.....]`, so a sized answer never ends in invisible filler. A gap too small for
 * that line (only when the answer has no key point to give back) gets a shorter one: `[padding.]`,
 * `[..]`, or a final newline for a gap of one byte.
 */
function withPaddingLine(body: string, bytes: number): string {
  const gap = bytes - Buffer.byteLength(body);
  if (gap <= 0) return body;
  const label = PADDING_LABELS.find((candidate) => candidate.length + 2 <= gap);
  if (label === undefined) return `${body}\n`;
  return `${body}\n${label}${'.'.repeat(gap - label.length - 2)}]`;
}

/**
 * `text` cut to at most `maximum` characters where a sentence ends (`.`, `!` or `?` before a space
 * or the end; a list number such as `3.` is no sentence), else where a line or word ends, so an
 * answer cut at a limit never stops inside a word.
 */
export function cutAtSentence(text: string, maximum: number): string {
  if (text.length <= maximum) return text;
  const slice = text.slice(0, maximum);
  const within = (end: number) => end > 0 && (end === slice.length || /\s/.test(text[end] ?? ''));
  let sentenceEnd = -1;
  for (const match of slice.matchAll(/[.!?](?=\s|$)/g)) {
    const lineStart = slice.lastIndexOf('\n', match.index) + 1;
    if (/^\s*\d+$/.test(slice.slice(lineStart, match.index))) continue;
    if (within(match.index + 1)) sentenceEnd = match.index + 1;
  }
  if (sentenceEnd > 0) return slice.slice(0, sentenceEnd);
  const lineEnd = slice.lastIndexOf('\n');
  if (lineEnd > 0) return slice.slice(0, lineEnd);
  const wordEnd = slice.lastIndexOf(' ');
  return wordEnd > 0 ? slice.slice(0, wordEnd) : slice;
}
