/**
 * The floor of the paced-streams scenario: bare `node:http`, no validation and no log, that answers every
 * request with the mock's captured stream, paced. Each stream's events are due on an absolute schedule,
 * the first token `ttft` ms after the request and each next one 1/tps s later, and each timer is set
 * against that schedule (not chained from the previous one), so late timers do not add up. What it does
 * not reach on time, no server in Node would.
 *
 * Usage: node pacedFloor.mjs --answer FILE --ttft MS --tps N
 *   FILE is JSON {contentType, body (base64), tokensBefore}: the captured stream, and for each of its
 *   events how many token intervals after the first token it is due (written by the driver).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

interface PacedAnswer {
  contentType: string;
  body: string;
  tokensBefore: number[];
}

/** The events grouped by when they are due: one write per group, as the mock writes what is due at once. */
function groups(answer: PacedAnswer): { afterTokens: number; bytes: Buffer }[] {
  const events =
    Buffer.from(answer.body, 'base64')
      .toString('utf8')
      .match(/[^]*?\n\n/g) ?? [];
  const out: { afterTokens: number; bytes: string }[] = [];
  events.forEach((event, i) => {
    const afterTokens = answer.tokensBefore[i]!;
    const last = out[out.length - 1];
    if (last?.afterTokens === afterTokens) last.bytes += event;
    else out.push({ afterTokens, bytes: event });
  });
  return out.map((g) => ({ afterTokens: g.afterTokens, bytes: Buffer.from(g.bytes) }));
}

function main(): void {
  const { values } = parseArgs({
    options: { answer: { type: 'string' }, ttft: { type: 'string' }, tps: { type: 'string' } },
  });
  const answer = JSON.parse(readFileSync(values.answer!, 'utf8')) as PacedAnswer;
  const ttftMs = Number(values.ttft);
  const msPerToken = 1000 / Number(values.tps);
  const due = groups(answer);

  const serve = (res: ServerResponse) => {
    const first = performance.now() + ttftMs;
    res.writeHead(200, { 'content-type': answer.contentType, 'cache-control': 'no-cache' });
    let g = 0;
    let timer: NodeJS.Timeout | undefined;
    const next = () => {
      const { bytes } = due[g++]!;
      if (g === due.length) return res.end(bytes);
      res.write(bytes);
      timer = setTimeout(next, first + due[g]!.afterTokens * msPerToken - performance.now());
    };
    timer = setTimeout(next, ttftMs);
    res.on('close', () => clearTimeout(timer));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => serve(res));
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`paced floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}

main();
