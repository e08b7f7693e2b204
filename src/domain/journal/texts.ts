/**
 * The texts an unread journal entry holds instead of objects: header texts shared between entries, and
 * texts flattened so that holding one does not hold the pieces it was built from.
 */
import type { RequestDetail } from './record.js';
import { flattenString } from '../../lib/internals.js';

/**
 * The header texts unread entries hold, one copy of each: a client sends the same headers request after
 * request, and the mock answers with the same ones but for the request id (and the Date, once a second),
 * so most entries share them instead of each holding its own (which the garbage collector would copy
 * out of the young generation). A new request's headers are compared with those of the last few texts
 * made, value by value, and a response's header block with the last few blocks: a repeat costs those
 * comparisons, not a text built and hashed to be looked up.
 */
export class SharedTexts {
  /** The last request header texts made, newest first, with the names and values they were made from. */
  private requests: { readonly pairs: readonly unknown[]; readonly text: string }[] = [];
  /** The last response header lines kept (see responseHead), newest first. */
  private heads: string[] = [];

  /** The text of a request's headers (see headerText), shared with earlier entries when they are the same. */
  requestHeaders(headers: RequestDetail['headers']): string {
    search: for (const seen of this.requests) {
      const pairs = seen.pairs;
      let i = 0;
      for (const name in headers) {
        const value = headers[name];
        if (value === undefined) continue;
        if (pairs[i] !== name || pairs[i + 1] !== value) continue search;
        i += 2;
      }
      if (i === pairs.length) return seen.text;
    }
    const text = headerText(headers);
    // A list value (a repeated header) is a new array in every request, so it never matches a later one.
    const pairs: unknown[] = [];
    for (const name in headers) if (headers[name] !== undefined) pairs.push(name, headers[name]);
    this.requests = [{ pairs, text }, ...this.requests.slice(0, RECENT_TEXTS - 1)];
    return text;
  }

  /**
   * A response's header lines without its status line and its x-request-id line, which the mock writes
   * first (beginResponse) and the journal leaves out of an entry's response headers anyway (it is the
   * entry's requestId): the rest repeats from answer to answer, and is shared with earlier entries when
   * it is the same. The text starts with the line break that ended the status line (headersFromBlock
   * reads it as a block whose first line is empty).
   */
  responseHead(head: string): string {
    const first = head.indexOf('\r\n');
    if (first < 0) return head;
    const second = head.startsWith('x-request-id:', first + 2) ? head.indexOf('\r\n', first + 2) : -1;
    const from = second < 0 ? first : second;
    // The block is flat once indexOf has read it, so the slice is a view, and === compares it with memcmp:
    // a third faster than endsWith.
    for (const seen of this.heads) if (seen.length === head.length - from && head.slice(from) === seen) return seen;
    // A copy, flattened: a slice of the block would hold the whole block, request id and all.
    const text = flattenString('\r\n' + head.slice(from + 2));
    this.heads = [text, ...this.heads.slice(0, RECENT_TEXTS - 1)];
    return text;
  }
}

// How many recent header texts of each kind SharedTexts compares a new one with: the clients of a test
// run are few. A cache size, not a bound of what an entry keeps: no entry shows it, so it is not in
// fixtures/limits.json.
const RECENT_TEXTS = 8;

// Header names hold no colon and values no line break (the HTTP parser refuses both): one line per header.
// Joined rather than concatenated: one flat string, not a tree of a dozen pieces (see flattenString, lib/internals.ts).
function headerText(headers: RequestDetail['headers']): string {
  const parts: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) parts.push(name, ': ', Array.isArray(value) ? value.join(', ') : String(value), '\n');
  }
  return parts.join('');
}

export function headersFromText(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon > 0) out[line.slice(0, colon)] = line.slice(colon + 2);
  }
  return out;
}
