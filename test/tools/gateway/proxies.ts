// Small gateways written for the tests (node:http): a faithful one, and the same with one planted defect each. The
// faithful one relays a request as it came (its own key upstream), the answer as it comes (events written as they
// arrive), ends the client's connection when the upstream's breaks, and gives up on a hung upstream after its timeout
// with a 504 (or, mid-stream, by closing the connection).
import { createServer, request as httpRequest, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One planted defect, each the kind of bug a gateway ships with. */
export type Defect =
  /** Reads the whole event stream, then sends it: the time to first token is the whole answer's. */
  | 'buffers-streams'
  /** Leaves out retry-after (and retry-after-ms) when it relays an error. */
  | 'drops-retry-after'
  /** Ends the client's stream with data: [DONE] when the upstream's breaks. */
  | 'fakes-done'
  /** Writes every upstream stream's events to the client stream opened last. */
  | 'mixes-streams'
  /** Retries an upstream 5xx that asks for no wait at once, twice (one with retry-after waits it). */
  | 'retries-at-once'
  /** Sends the client's Authorization upstream instead of its own key. */
  | 'forwards-key'
  /** Clamps temperature into 0..2 before it forwards it (as Portkey does). */
  | 'clamps-temperature'
  /** Has no timeout: a hung upstream holds the client as long as it hangs. */
  | 'no-timeout';

export interface ProxyOptions {
  /** The upstream's base URL. */
  readonly upstream: string;
  /** The key it sends upstream. */
  readonly upstreamKey: string;
  /** How long it waits for the upstream's answer, or for the next bytes of it. */
  readonly timeoutMs: number;
  readonly defect?: Defect;
}

export interface TestGateway {
  readonly url: string;
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length'];

const envelope = (status: number, message: string) =>
  JSON.stringify({ error: { message, type: status === 504 ? 'timeout' : 'server_error', param: null, code: null } });

/** Starts a gateway on a free loopback port. */
export async function startGateway(o: ProxyOptions): Promise<TestGateway> {
  const upstream = new URL(o.upstream);
  let newest: ServerResponse | undefined; // mixes-streams: the client stream opened last
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      let body = Buffer.concat(parts);
      if (o.defect === 'clamps-temperature') {
        try {
          const json = JSON.parse(body.toString('utf8')) as { temperature?: number };
          if (typeof json.temperature === 'number') json.temperature = Math.min(2, Math.max(0, json.temperature));
          body = Buffer.from(JSON.stringify(json));
        } catch {
          // not JSON: as it came
        }
      }
      const headers: IncomingHttpHeaders = { ...req.headers };
      for (const h of HOP_BY_HOP) delete headers[h];
      if (o.defect !== 'forwards-key') headers.authorization = `Bearer ${o.upstreamKey}`;
      headers['content-length'] = String(body.length);
      attempt(0);

      function attempt(n: number): void {
        let timer: NodeJS.Timeout | undefined;
        const up = httpRequest({
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers,
        });
        // The client gone: the upstream's request goes too.
        res.on('close', () => up.destroy());
        const arm = (then: () => void) => {
          if (o.defect === 'no-timeout') return;
          clearTimeout(timer);
          timer = setTimeout(then, o.timeoutMs);
        };
        arm(() => {
          up.destroy();
          if (!res.headersSent)
            res.writeHead(504, { 'content-type': 'application/json' }).end(envelope(504, 'upstream timed out'));
        });
        up.on('error', () => {
          clearTimeout(timer);
          if (!res.headersSent)
            res.writeHead(502, { 'content-type': 'application/json' }).end(envelope(502, 'upstream unreachable'));
        });
        up.on('response', (answer) => {
          const status = answer.statusCode!;
          const retryAfter = answer.headers['retry-after'];
          if (o.defect === 'retries-at-once' && status >= 500 && !retryAfter && n < 2) {
            answer.resume();
            clearTimeout(timer);
            return attempt(n + 1);
          }
          const out: IncomingHttpHeaders = { ...answer.headers };
          for (const h of ['connection', 'keep-alive', 'transfer-encoding']) delete out[h];
          if (o.defect === 'drops-retry-after') {
            delete out['retry-after'];
            delete out['retry-after-ms'];
          }
          const stream = /event-stream/.test(answer.headers['content-type'] ?? '');
          if (stream) delete out['content-length'];
          res.writeHead(status, out);
          // Mid-stream, the timeout is the wait for the next bytes; a stalled upstream ends the client's connection.
          const idle = () =>
            arm(() => {
              up.destroy();
              res.destroy();
            });
          idle();
          if (stream && o.defect === 'mixes-streams') newest = res;
          const buffered: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => {
            idle();
            if (stream && o.defect === 'buffers-streams') buffered.push(chunk);
            else if (stream && o.defect === 'mixes-streams' && !newest!.writableEnded) newest!.write(chunk);
            else res.write(chunk);
          });
          answer.on('close', () => {
            clearTimeout(timer);
            if (answer.complete) {
              if (buffered.length) res.write(Buffer.concat(buffered));
              res.end();
            } else if (o.defect === 'fakes-done' && stream) res.end('data: [DONE]\n\n');
            // The upstream's connection broke before the end of its answer: so does the client's.
            else res.destroy();
          });
        });
        up.end(body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
