import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Incoming, Mutant } from './mutants.js';

/**
 * One test double for every mutant: a request to /m/<n>/<path> is answered as the mock with mutant n
 * would answer it (the mock behind it, with that one rule weakened); any other path goes to the mock as
 * it is (media links). Serving all mutants from one port lets them run concurrently.
 */
export async function startDouble(
  mutants: readonly Mutant[],
  upstream: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(upstream);
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const m = /^\/m\/(\d+)(\/.*)?$/.exec(req.url ?? '');
      const mutant = m ? mutants[Number(m[1])] : undefined;
      const path = m ? (m[2] ?? '/') : (req.url ?? '/');
      let body = Buffer.concat(parts);
      const headers: IncomingHttpHeaders = { ...req.headers };
      const incoming: Incoming = {
        method: req.method ?? 'GET',
        path: path.split('?')[0]!,
        headers: { authorization: req.headers.authorization },
        raw: body.toString('utf8'),
      };
      const action = mutant?.act(incoming) ?? { kind: 'forward' };
      if (action.kind === 'body') body = Buffer.from(action.body);
      if (action.kind === 'auth') headers.authorization = action.authorization;
      headers['content-length'] = String(body.length);
      if (!body.length && req.method === 'GET') delete headers['content-length'];
      const up = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path, headers },
        (answer) => {
          const status = action.kind === 'status' && answer.statusCode === action.from ? action.to : answer.statusCode!;
          res.writeHead(status, answer.headers);
          answer.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      up.end(body);
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
