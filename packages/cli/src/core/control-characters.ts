/**
 * Whether a character code is a control a terminal may act on: every C0 control (ESC, BEL, CR…), DEL
 * and every C1 control (CSI `\x9b`…). Line feeds and tabs are left alone when `keepLayout` is set.
 */
function isControl(code: number, keepLayout: boolean): boolean {
  if (keepLayout && (code === 0x0a || code === 0x09)) return false;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/**
 * `text` with each control character (see {@link isControl}) replaced by `escaped(code)`, the way the
 * output at hand writes it (`\x1b` for a terminal, `\u001b` inside JSON); the same string when it
 * holds none. The one loop behind the CLI's terminal text and its `--json` documents.
 */
export function escapeControls(text: string, escaped: (code: number) => string, keepLayout: boolean): string {
  let result = '';
  let copiedUpTo = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (!isControl(code, keepLayout)) continue;
    result += text.slice(copiedUpTo, index) + escaped(code);
    copiedUpTo = index + 1;
  }
  return copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
}
