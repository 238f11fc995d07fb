/** Splits a shell command line into words: spaces separate, '...' and "..." quote, `#` starts a comment. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index]!;
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"' && index + 1 < line.length) word += line[++index];
      else word += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === '#' && !inWord) {
      break;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The commands of a shell block: one per line, `&&` chains split, prompts (`$ `) and comments dropped. */
export function shellCommands(block: string): string[][] {
  const commands: string[][] = [];
  for (const raw of block.split('\n')) {
    const line = raw.replace(/^\s*\$\s+/, '').trim();
    if (line === '' || line.startsWith('#')) continue;
    for (const part of line.split('&&')) {
      const words = shellWords(part);
      if (words.length > 0) commands.push(words);
    }
  }
  return commands;
}
