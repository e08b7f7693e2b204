/**
 * Longest pre-tokenizer piece, in UTF-16 code units, handed to the BPE encoder in one go. gpt-tokenizer's
 * byte-pair merge is quadratic in the length of a piece, and a piece is a whole run of letters, of
 * punctuation or of whitespace: 100,000 'a's or 40,000 CJK characters without a break would block the
 * event loop for seconds. Ordinary words and sentences are far shorter than this, so they are never cut.
 */
export const MAX_PIECE = 512;

// JS \s: the characters the tokenizer's split patterns treat as whitespace.
function isSpace(c: number): boolean {
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * True when the text has a run of at least `min` whitespace or non-whitespace code units. A piece is at most
 * one whitespace run and one non-whitespace run plus one character, so without such a run (min = MAX_PIECE / 2)
 * no piece is longer than MAX_PIECE. One pass with charCodeAt and no allocation, so ordinary text pays nothing.
 */
export function hasLongRun(text: string, min: number): boolean {
  if (text.length < min) return false;
  let run = 0;
  let space = false;
  for (let i = 0; i < text.length; i++) {
    const s = isSpace(text.charCodeAt(i));
    run = s === space ? run + 1 : 1;
    space = s;
    if (run >= min) return true;
  }
  return false;
}

// Cuts a long piece into slices of at most MAX_PIECE code units, never between the halves of a surrogate pair.
function cut(piece: string, out: string[]): void {
  for (let at = 0; at < piece.length;) {
    let end = Math.min(at + MAX_PIECE, piece.length);
    const last = piece.charCodeAt(end - 1);
    if (end < piece.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(piece.slice(at, end));
    at = end;
  }
}

/**
 * Splits text into consecutive parts (joining to the text) that can be encoded one by one with the same split
 * pattern without any piece longer than MAX_PIECE. Text without long pieces is returned whole, so its tokens are
 * exactly the unsliced ones; only the long pieces are cut, which changes their token count by a token per cut at most.
 */
export function slices(text: string, split: RegExp): string[] {
  if (!hasLongRun(text, MAX_PIECE / 2)) return [text];
  const out: string[] = [];
  let from = 0;
  for (const match of text.matchAll(split)) {
    const piece = match[0];
    if (piece.length <= MAX_PIECE) continue;
    if (match.index > from) out.push(text.slice(from, match.index));
    cut(piece, out);
    from = match.index + piece.length;
  }
  if (from < text.length || out.length === 0) out.push(text.slice(from));
  return out;
}
