import * as crypto from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

// crypto.hash (Node >= 20.12) digests in one native call without building a Hash object, the fastest
// way for the short inputs hashed on every request; older Nodes fall back to createHash. Its 'buffer'
// output costs about twice a string output on Node 20 (1,070 against 530 ns for a chat body), so the
// digest comes back as a Latin-1 string ('binary'), one character per byte, and is copied into a Buffer: the same
// bytes (base64 and decoding it cost 620 ns).
const oneShot = typeof crypto.hash === 'function';

// Past this length a one-shot digest would first copy the joined parts; streaming them is cheaper.
const ONE_SHOT_MAX = 4096;

// A string is hashed a piece at a time past this length: hashing converts the string to bytes first, and a request
// body of 20 MB converted whole was 20 MB more at the request's peak.
const PIECE_CHARS = 1 << 20;

/**
 * Adds a string's UTF-8 bytes (`latin1` when the caller knows it is ASCII: the same bytes, converted faster) to a
 * hash, a MiB at a time, never between the halves of a surrogate pair.
 */
export function updateWithText(h: crypto.Hash, text: string, encoding: 'utf8' | 'latin1' = 'utf8'): crypto.Hash {
  if (text.length <= PIECE_CHARS) return h.update(text, encoding);
  for (let at = 0; at < text.length;) {
    let end = Math.min(at + PIECE_CHARS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    h.update(text.slice(at, end), encoding);
    at = end;
  }
  return h;
}

/** SHA-256 of a string (UTF-8) or bytes. */
export function sha256(data: string | Buffer): Buffer {
  return oneShot
    ? Buffer.from(crypto.hash('sha256', data, 'binary'), 'latin1')
    : crypto.createHash('sha256').update(data).digest();
}

// Each part is followed by a NUL, so the bytes hashed are the same whether they are joined or streamed.
const joined = (parts: readonly string[]): string => (parts.length ? `${parts.join('\u0000')}\u0000` : '');

/** SHA-256 of the parts: the root of every id and seed, so the same request gives the same body. */
export function digest(...parts: (string | Buffer)[]): Buffer {
  let length = 0;
  let strings = true;
  for (const p of parts) {
    length += p.length + 1;
    if (typeof p !== 'string') strings = false;
  }
  if (strings && length <= ONE_SHOT_MAX) return sha256(joined(parts as string[]));
  const h = crypto.createHash('sha256');
  // An ASCII string has the same bytes in Latin-1 as in UTF-8, and Latin-1 is a plain copy: a third
  // of the time for a 14 MB base64 body. UTF-8 is as long as the string only when it is all ASCII.
  for (const p of parts) {
    if (typeof p !== 'string') h.update(p);
    else updateWithText(h, p, Buffer.byteLength(p, 'utf8') === p.length ? 'latin1' : 'utf8');
    h.update('\u0000');
  }
  return h.digest();
}

const CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0));

/** An id such as chatcmpl-<29 letters and digits>, derived from a digest. */
export function idFrom(d: Buffer, prefix: string, length: number): string {
  return idFromText(d.toString('latin1'), prefix, length);
}

/** idFrom over a digest held as a Latin-1 string, one character per byte. */
function idFromText(d: string, prefix: string, length: number): string {
  // One string from the character codes, not one new string per character appended (a chat id made 29).
  const codes = new Array<number>(length);
  for (let i = 0; i < length; i++) codes[i] = CODES[d.charCodeAt(i % d.length) % CODES.length]!;
  return prefix + String.fromCharCode.apply(null, codes);
}

/**
 * idFrom(digest(...parts), prefix, length), for the ids made on every request: the digest stays the
 * Latin-1 string crypto.hash gives (one character per byte), with no Buffer made of it (984 against 627
 * ns for a chat id on Node 20).
 */
export function idOf(prefix: string, length: number, ...parts: string[]): string {
  let size = 0;
  for (const p of parts) size += p.length + 1;
  const d =
    oneShot && size <= ONE_SHOT_MAX
      ? crypto.hash('sha256', joined(parts), 'binary')
      : digest(...parts).toString('latin1');
  return idFromText(d, prefix, length);
}

/** A 32-bit unsigned seed from a digest. */
export const seedFrom = (d: Buffer, offset = 0): number => d.readUInt32BE(offset % (d.length - 3));

/** Lower-case hex of a digest, cut to `length` characters. */
export const hexFrom = (d: Buffer, length: number): string => d.toString('hex').slice(0, length);
