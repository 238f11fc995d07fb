// Building DOM and SVG nodes from data. Text always goes in as text nodes: nothing read from a
// checkpoint is ever parsed as HTML.

const svgNamespace = 'http://www.w3.org/2000/svg';

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return element;
}

function assign(element, attributes) {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  return element;
}

/** An HTML element: `h('p', { class: 'note' }, 'text', child)`. */
export function h(tag, attributes, ...children) {
  return append(assign(document.createElement(tag), attributes), children);
}

/** An SVG element, same call shape as {@link h}. */
export function s(tag, attributes, ...children) {
  return append(assign(document.createElementNS(svgNamespace, tag), attributes), children);
}

/** Replaces every child of `element`. */
export function replace(element, ...children) {
  element.replaceChildren();
  return append(element, children);
}

/** `2026-11-26 22:23:01` in local time. */
export function formatTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (value) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** `22:23:01` in local time. */
export function formatClock(iso) {
  return formatTime(iso).slice(11);
}

/** A value as text: strings as they are, anything else as indented JSON. */
export function valueText(value) {
  if (value === undefined) return '(absent)';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** `1 checkpoint`, `2 checkpoints`: a count with its noun (plural with an `s` unless given). */
export function plural(count, noun, nouns = `${noun}s`) {
  return `${count} ${count === 1 ? noun : nouns}`;
}

/**
 * `crew Research`, `flow Pipeline`; an entity whose name is its kind (the runtime names a crew
 * without a name "crew") is said once, as the terminal UI says it: `crew`, not `crew crew`.
 */
export function entityLabel(kind, name) {
  return name === kind || name === '' ? kind : `${kind} ${name}`;
}
