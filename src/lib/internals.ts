import type { ServerResponse } from 'node:http';

// Each use the mock makes of a Node or V8 internal (something no documentation promises) is one function
// here, with what it stands for done through public means when the internal is not there or not what it
// was. test/lib/internals.test.ts checks, on the Node that runs it, that each internal is there and
// behaves as these functions assume, so a Node release that changes one fails a test rather than
// slowing down or breaking the mock unnoticed.

/**
 * The header block Node wrote for a response (status line and headers, as sent), or undefined before it
 * is written. Node keeps it in `res._header` (a string once the head is made, since Node 0.x); reading it
 * costs nothing, where the public getHeaders() builds an object per call. Undefined when the field is not
 * a string: the caller then falls back to getHeaders() (requestContext.reportRequest), which is correct
 * for every answer written through setHeader, the way Koa writes.
 */
export function writtenHead(res: ServerResponse): string | undefined {
  const head = (res as unknown as { _header?: unknown })._header;
  return typeof head === 'string' ? head : undefined;
}

/**
 * Makes a response the last on its connection. Node's `res.shouldKeepAlive` (an undocumented field)
 * set to false makes Node add `Connection: close` after the headers the mock set and close the
 * connection once the answer is sent, as for an HTTP/1.0 client; setting the header instead would put it
 * first and make the answer's head a progressive one. Where the field is not a boolean, the header is
 * set: the same answer, its headers in another order. Either way, only before the head is sent.
 */
export function closeAfter(res: ServerResponse): void {
  if (typeof (res as { shouldKeepAlive?: unknown }).shouldKeepAlive === 'boolean') res.shouldKeepAlive = false;
  else if (!res.headersSent) res.setHeader('Connection', 'close');
}

/**
 * The same text, flattened. A text built by `+` (Node's header block, the JSON of an answer) is a tree
 * of its pieces in V8, and holding it holds every piece: a hundred requests' worth of small objects for
 * the garbage collector to copy. Converting a string to a number makes V8 flatten it in place, into one
 * piece (String::Flatten, before parsing). Nothing depends on it for correctness: were V8 to stop
 * flattening here, the text would be the same and only the pieces would stay.
 */
export function flattenString<T>(value: T): T {
  if (typeof value === 'string') Number(value);
  return value;
}
