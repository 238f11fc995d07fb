/**
 * Splits text into chunks of at most `size` characters that overlap by about `overlap` characters,
 * cutting at a paragraph, sentence or word boundary when there is one in the last third of a chunk.
 */
export function chunkText(text: string, size: number, overlap: number): string[] {
  const chunks: string[] = [];
  const normalized = text.replace(/\r\n/g, '\n');
  let start = 0;
  while (start < normalized.length) {
    let end = Math.min(start + size, normalized.length);
    if (end < normalized.length) {
      const window = normalized.slice(start, end);
      const floor = Math.floor(size * (2 / 3));
      const boundary = Math.max(
        window.lastIndexOf('\n\n'),
        window.lastIndexOf('. '),
        window.lastIndexOf('\n'),
      );
      const space = window.lastIndexOf(' ');
      if (boundary >= floor) end = start + boundary + 1;
      else if (space >= floor) end = start + space + 1;
    }
    const chunk = normalized.slice(start, end).trim();
    if (chunk.length > 0) chunks.push(chunk);
    if (end >= normalized.length) break;
    start = Math.max(end - overlap, start + 1);
  }
  return chunks;
}
