// What a value holds instead of a credential: placeholders, templates of where one will go, prose
// punctuation and calls. Such values are left alone (split out of secret-patterns.ts).
// Words a setting holds instead of a credential (`token: null`).
export const placeholderValue = /^(?:null|nil|none|undefined|true|false|redacted|\*+|x+)$/i;

// What a template holds where its password will go, each form whole: `${DB_PASSWORD}`, `$DB_PASSWORD`,
// `$(cat /run/secrets/db)`, `%s`, `%(password)s`, `%DB_PASSWORD%`, `<password>`, `[password]`, `{0}`
// (.NET's String.Format), `{{ db_password }}` (Jinja, Handlebars). Names in `<…>` and `[…]` have no
// digits, and `$NAME`, `%NAME%` are upper case: `<Kx9q>`, `$ecr3t` are passwords. Every part is bounded.
const templateForms = [
  /\$\{[\w.:-]{1,128}\}/,
  /\$[A-Z_][A-Z0-9_]{0,127}/,
  /\$\([^();\n]{0,256}\)/,
  /%s/,
  /%\([\w.]{1,128}\)s/,
  /%[A-Z_][A-Z0-9_]{0,127}%/,
  /<[A-Za-z_][A-Za-z _.-]{0,127}>/,
  /\[[A-Za-z_][A-Za-z _.-]{0,127}\]/,
  /\{[0-9]{1,2}\}/,
  /\{\{[ \t]{0,8}[\w.]{1,128}[ \t]{0,8}\}\}/,
]
  .map((form) => form.source)
  .join('|');

// Sticky: tried once, where a value starts.
const templateAtValue = new RegExp(`(?:${templateForms})`, 'y');

export const wholeTemplate = new RegExp(`^(?:${templateForms})$`);

// Punctuation and then a word after `=` (`;password=, then…`, `;password=... in`) is a sentence.
export const prosePunctuation = /[.,:!?]{1,64}[ \t]+\w/y;

// A call assigned in code (`token=next(state)`, `password=os.getenv("…")`): a name without digits,
// then `(`. `Tr0ub(4dor)` is a password.
export const callValue = /[A-Za-z_$][A-Za-z_$.]{0,63}\(/y;

/** Length of the template starting at `start`, or -1 (see templateForms). */
export function templateLength(text: string, start: number): number {
  templateAtValue.lastIndex = start;
  const match = templateAtValue.exec(text);
  return match === null ? -1 : match[0].length;
}

/** Whether a sticky expression matches at `start`. */
export function matchesAt(expression: RegExp, text: string, start: number): boolean {
  expression.lastIndex = start;
  return expression.test(text);
}
