/**
 * One HTTP byte range (RFC 9110 section 14), as static file servers read it: `bytes=a-b`, `bytes=a-`
 * and the suffix `bytes=-n`, the unit matched without regard to case and an end past the last byte
 * cut to it.
 */

/** The bytes a range selects: `start` to `end`, both included. */
interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * What a Range header asks of a representation of `size` bytes:
 * - a ByteRange: answer 206 with those bytes;
 * - `'unsatisfiable'`: answer 416 (`Content-Range: bytes *\/size`): the range starts at or past the end,
 *   asks for a suffix of 0 bytes, or the representation is empty;
 * - undefined: ignore the header and answer 200 with the whole body. That is the answer to no header, a
 *   unit other than bytes, a malformed value (an end before its start included) and several ranges
 *   (`bytes=0-1,5-6`): the whole body is a correct answer to all of them (RFC 9110 section 14.2), and one
 *   body is simpler for clients than multipart/byteranges. Empty list elements (`bytes=0-1,`) do not
 *   count as ranges, as the list syntax of RFC 9110 section 5.6.1 asks.
 */
export function parseByteRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const equals = header.indexOf('=');
  if (equals < 0 || header.slice(0, equals).toLowerCase() !== 'bytes') return undefined;
  const specs = header
    .slice(equals + 1)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (specs.length !== 1) return undefined;
  const m = /^(\d*)-(\d*)$/.exec(specs[0]!);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  const [, first, last] = m;
  if (first === '') {
    // A suffix: the last n bytes, or all of them when there are fewer.
    const length = Number(last);
    if (length === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}
