// A small Markdown renderer for task outputs that builds DOM nodes, never HTML text: headings,
// paragraphs, lists (ordered ones keep their first number), tables (GitHub's pipe tables, which
// models write often), block quotes, fenced code, rules, and inline code, bold, italics and links
// (http, https and mailto only). Raw HTML in an output is shown as the text it is.
import { h } from './dom.js';

const inlinePattern =
  /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|(?<![\w])_([^_\s][^_]*)_(?![\w])|\[([^\]]+)\]\(([^)\s]+)\)/g;

function safeLink(target) {
  try {
    const url = new URL(target);
    return ['http:', 'https:', 'mailto:'].includes(url.protocol) ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Inline Markdown of one block as DOM nodes. */
export function inline(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(inlinePattern)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    const [whole, , code, bold, boldUnderscore, italic, italicUnderscore, label, target] = match;
    if (code !== undefined) nodes.push(h('code', null, code));
    else if (bold !== undefined || boldUnderscore !== undefined)
      nodes.push(h('strong', null, ...inline(bold ?? boldUnderscore)));
    else if (italic !== undefined || italicUnderscore !== undefined)
      nodes.push(h('em', null, ...inline(italic ?? italicUnderscore)));
    else if (label !== undefined) {
      const href = safeLink(target);
      nodes.push(
        href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, ...inline(label)) : whole,
      );
    }
    last = match.index + whole.length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

const listItem = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/;
const tableDelimiter = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** The cells of a pipe-table row: outer pipes dropped, `\|` kept as a pipe inside a cell. */
function tableCells(line) {
  const trimmed = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

/** True when `lines[index]` starts a pipe table: a row with a pipe, then a delimiter row of as many cells. */
function startsTable(lines, index) {
  return (
    lines[index].includes('|') &&
    index + 1 < lines.length &&
    lines[index + 1].includes('-') &&
    tableDelimiter.test(lines[index + 1]) &&
    tableCells(lines[index + 1]).length === tableCells(lines[index]).length
  );
}

function alignmentOf(delimiter) {
  const left = delimiter.startsWith(':');
  const right = delimiter.endsWith(':');
  return left && right ? 'center' : right ? 'right' : left ? 'left' : undefined;
}

/** A Markdown text as a `div` of block elements. */
export function renderMarkdown(text) {
  const root = h('div', { class: 'markdown' });
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let index = 0;
  while (index < lines.length) {
    const line = lines[index];
    const fence = /^\s*(```|~~~)(.*)$/.exec(line);
    if (fence) {
      const body = [];
      index += 1;
      while (index < lines.length && !lines[index].trim().startsWith(fence[1])) body.push(lines[index++]);
      index += 1;
      root.append(h('pre', null, h('code', null, body.join('\n'))));
      continue;
    }
    if (line.trim() === '') {
      index += 1;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      root.append(h(`h${Math.min(6, heading[1].length + 2)}`, null, ...inline(heading[2])));
      index += 1;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      root.append(h('hr'));
      index += 1;
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted = [];
      while (index < lines.length && /^\s*>/.test(lines[index]))
        quoted.push(lines[index++].replace(/^\s*>\s?/, ''));
      root.append(h('blockquote', null, ...renderMarkdown(quoted.join('\n')).childNodes));
      continue;
    }
    if (startsTable(lines, index)) {
      const header = tableCells(line);
      const alignments = tableCells(lines[index + 1]).map(alignmentOf);
      // Through the style object: the page's Content-Security-Policy refuses style attributes.
      const cell = (tag, text, column) => {
        const element = h(tag, null, ...inline(text));
        if (alignments[column]) element.style.textAlign = alignments[column];
        return element;
      };
      index += 2;
      const rows = [];
      while (index < lines.length && lines[index].trim() !== '' && lines[index].includes('|')) {
        const cells = tableCells(lines[index++]);
        rows.push(
          h(
            'tr',
            null,
            header.map((_, column) => cell('td', cells[column] ?? '', column)),
          ),
        );
      }
      root.append(
        h(
          'table',
          { class: 'markdown-table' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              header.map((text, column) => cell('th', text, column)),
            ),
          ),
          h('tbody', null, rows),
        ),
      );
      continue;
    }
    const item = listItem.exec(line);
    if (item) {
      const ordered = /\d/.test(item[2]);
      const first = ordered ? Number.parseInt(item[2], 10) : 1;
      const list = h(ordered ? 'ol' : 'ul', first !== 1 ? { start: first } : null);
      while (index < lines.length) {
        const next = listItem.exec(lines[index]);
        if (next) {
          list.append(h('li', null, ...inline(next[3])));
        } else if (/^\s+\S/.test(lines[index]) && list.lastChild) {
          list.lastChild.append(' ', ...inline(lines[index].trim()));
        } else break;
        index += 1;
      }
      root.append(list);
      continue;
    }
    const paragraph = [];
    while (
      index < lines.length &&
      lines[index].trim() !== '' &&
      !/^\s*(```|~~~|#{1,6}\s|>)/.test(lines[index]) &&
      !listItem.test(lines[index]) &&
      !startsTable(lines, index)
    )
      paragraph.push(lines[index++].trim());
    const nodes = [];
    paragraph.forEach((part, position) => {
      if (position > 0) nodes.push(h('br'));
      nodes.push(...inline(part));
    });
    root.append(h('p', null, ...nodes));
  }
  return root;
}
