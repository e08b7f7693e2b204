import type { IncomingMessage } from 'node:http';
import { ApiError, ERRORS } from '../contract/errors.js';

import { BODY_READ } from '../lib/symbols.js';

const aborted = () =>
  new ApiError(ERRORS.INVALID_JSON, {
    code: 'request_aborted',
    message: 'The request body was cut off before its end.',
  });

/**
 * What a body of no declared length (chunked) does once it has grown to `at` bytes: `wait` is called once, and the
 * body is read on when what it returns settles (room in the body budget).
 */
export interface LargeBody {
  readonly at: number;
  wait(): Promise<void> | void;
}

/**
 * Reads a request body whole, with raw-body's rules (as koa-bodyparser applies them): at most `limit`
 * bytes (413 past it), exactly the declared Content-Length (400 otherwise), and a 400 when the client
 * stops half-way. A body that came with its headers (most do) is taken from the buffer in one read,
 * a tick after the headers, without waiting for the end of the message; any other is read as it comes.
 */
export async function readBody(
  req: IncomingMessage,
  limit: number,
  tooLarge: () => ApiError = () => new ApiError(ERRORS.BODY_TOO_LARGE),
  large?: LargeBody,
): Promise<Buffer> {
  const declared = req.headers['content-length'];
  const length = declared ? Number(declared) : undefined;
  await undefined; // the parser goes on with the bytes after the headers once the request event returns
  if (!req.readable) throw aborted();
  if (length && req.readableLength >= length && !req.readableFlowing) {
    const body = req.read(length) as Buffer | null;
    if (body) {
      (req as IncomingMessage & { [BODY_READ]?: boolean })[BODY_READ] = true; // nothing left for the connection tracker to discard
      return body;
    }
  }
  return stream(req, limit, length, tooLarge, length === undefined ? large : undefined);
}

/**
 * Reads a body as its chunks arrive; on an error the request is paused and the connection tracker discards the rest.
 * A body of a declared length is copied into one buffer of that length as it comes: kept as chunks and joined at
 * the end, a large body took twice its size at its peak.
 */
function stream(
  req: IncomingMessage,
  limit: number,
  length: number | undefined,
  tooLarge: () => ApiError,
  large: LargeBody | undefined,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    // Node's parser never passes on more than the declared length as this request's body.
    const whole = length !== undefined && length <= limit ? Buffer.allocUnsafe(length) : undefined;
    let received = 0;
    let failed = false;
    let grown = large === undefined;
    const cleanup = () => {
      req.off('aborted', onAborted);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const fail = (err: Error) => {
      failed = true;
      cleanup();
      req.unpipe();
      req.pause();
      reject(err);
    };
    function onAborted() {
      fail(aborted());
    }
    function onData(chunk: Buffer) {
      if (whole && received + chunk.length <= whole.length) chunk.copy(whole, received);
      else if (whole)
        return fail(tooLarge()); // more than declared: never from Node's parser
      else chunks.push(chunk);
      received += chunk.length;
      if (received > limit) return fail(tooLarge());
      if (!grown && received >= large!.at) {
        grown = true;
        // Read on once there is room; the chunks already here wait in the request (TCP holds the client back).
        const wait = large!.wait();
        if (wait) {
          req.pause();
          void wait.then(() => failed || req.resume());
        }
      }
    }
    function onEnd() {
      cleanup();
      if (length !== undefined && received !== length) {
        reject(
          new ApiError(ERRORS.INVALID_JSON, {
            code: 'invalid_content_length',
            message: 'The request body does not match its Content-Length.',
          }),
        );
      } else resolve(whole ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)));
    }
    function onError(err: Error) {
      fail(err);
    }
    req.on('aborted', onAborted);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
