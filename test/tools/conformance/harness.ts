import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { conformance } from '../../../src/tools/conformance/cli.js';
import { start, type RunningMock } from '../../../src/server/server.js';

/** A request as the proxy sees it; a defect may change any part before it reaches the mock. */
export interface ProxiedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed body when it is a JSON object; a defect that sets it sends it instead of the body. */
  json: Record<string, unknown> | undefined;
  /** The body as it came. */
  readonly raw: string;
}

/** A complete response; a defect may change it before it reaches the runner. */
export interface ProxiedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One planted defect: a rewrite of requests, of responses, or both. */
export interface Defect {
  request?(req: ProxiedRequest): void;
  /** Rewrites a whole response; the proxy buffers the responses it rewrites. */
  response?(res: ProxiedResponse, req: ProxiedRequest): void;
  /** Event streams pass through as they arrive unless this is true (then they are buffered and rewritten too). */
  bufferStreams?: boolean;
}

/** A server in front of the mock with one defect planted; counts the requests it receives. */
export interface BrokenServer {
  readonly url: string;
  readonly requests: () => number;
  close(): Promise<void>;
}

let mock: RunningMock | undefined;

/** The mock every broken server forwards to (one per test process: starting one compiles every schema). */
export async function sharedMock(): Promise<RunningMock> {
  return (mock ??= await start({ port: 0, logLevel: 'silent' }));
}

/** Closes the shared mock. */
export async function closeSharedMock(): Promise<void> {
  await mock?.close();
  mock = undefined;
}

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

/** Starts a proxy to the shared mock with the defect planted. */
export async function brokenServer(defect: Defect = {}, upstream?: string): Promise<BrokenServer> {
  const target = new URL(upstream ?? (await sharedMock()).url);
  let count = 0;
  const server = createServer((req, res) => {
    count++;
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts);
      // A defect sees the body as an object when it is a JSON object; other bodies pass as they are,
      // unless the defect sets json to send instead.
      let json: Record<string, unknown> | undefined;
      try {
        const parsed: unknown = raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
        json =
          parsed && typeof parsed === 'object' && !Array.isArray(parsed)
            ? (parsed as Record<string, unknown>)
            : undefined;
      } catch {
        json = undefined;
      }
      const proxied: ProxiedRequest = {
        method: req.method!,
        path: req.url!,
        headers: { ...req.headers },
        json,
        raw: raw.toString('utf8'),
      };
      defect.request?.(proxied);
      const body = proxied.json && defect.request ? Buffer.from(JSON.stringify(proxied.json)) : raw;
      const headers: IncomingHttpHeaders = { ...proxied.headers, 'content-length': String(body.length) };
      if (!proxied.json && !raw.length) delete headers['content-length'];
      const up = httpRequest(
        { host: target.hostname, port: target.port, method: proxied.method, path: proxied.path, headers },
        (answer) => {
          const stream = /event-stream/.test(answer.headers['content-type'] ?? '');
          if (!defect.response || (stream && !defect.bufferStreams)) {
            res.writeHead(answer.statusCode!, answer.headers);
            answer.pipe(res);
            return;
          }
          const chunks: Buffer[] = [];
          answer.on('data', (c: Buffer) => chunks.push(c));
          answer.on('end', () => {
            const out: ProxiedResponse = {
              status: answer.statusCode!,
              headers: { ...answer.headers },
              body: Buffer.concat(chunks),
            };
            defect.response!(out, proxied);
            delete out.headers['transfer-encoding'];
            out.headers['content-length'] = String(out.body.length);
            res.writeHead(out.status, out.headers);
            res.end(out.body);
          });
        },
      );
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  const url = await listen(server);
  return {
    url,
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The outcome of one conformance run: exit code and what it wrote. */
export interface RunOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** The flags that write every reporter at once: pretty to standard output, the others each to its file. */
export const everyReporter = (files: {
  readonly json: string;
  readonly junit: string;
  readonly tap: string;
}): string[] => [
  ...['--reporter', 'pretty'],
  ...['--reporter', 'json', '--output', files.json],
  ...['--reporter', 'junit', '--output', files.junit],
  ...['--reporter', 'tap', '--output', files.tap],
];

/** Runs the conformance command in-process. */
export async function runCli(argv: string[]): Promise<RunOutput> {
  let stdout = '';
  let stderr = '';
  const code = await conformance(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: {},
  });
  return { code, stdout, stderr };
}

/** Runs the suite against a URL with the JSON reporter and returns the ids by verdict. */
export async function runJson(
  url: string,
  extra: string[] = [],
  key = 'sk-mock-default',
): Promise<{ code: number; failed: string[]; verdicts: Map<string, string>; report: JsonReport }> {
  const out = await runCli(['--base-url', url, '--api-key', key, '--reporter', 'json', ...extra]);
  let report: JsonReport;
  try {
    report = JSON.parse(out.stdout) as JsonReport;
  } catch {
    throw new Error(`no JSON report (exit code ${out.code}); stderr: ${out.stderr}`);
  }
  return {
    code: out.code,
    failed: report.cases
      .filter((c) => c.verdict === 'fail')
      .map((c) => c.id)
      .sort(),
    verdicts: new Map(report.cases.map((c) => [c.id, c.verdict])),
    report,
  };
}

/** The parts of the JSON report the tests read. */
export interface JsonReport {
  target: string;
  summary: {
    total: number;
    passed: number;
    failed: number;
    warnings: number;
    inconclusive: number;
    notApplicable: number;
    billable: number;
  };
  cases: {
    id: string;
    operation: string;
    verdict: string;
    reason?: string;
    expected: { status: number; checks: string[] };
    failures: { check: string; expected: string; actual: string }[];
    attempts: number;
    /** The request as sent (the last attempt), secrets masked. */
    request: { method: string; url: string; headers: Record<string, string>; body?: unknown };
    tags: string[];
    level: 'must' | 'should';
    billable: boolean;
  }[];
}

/**
 * The ids of invalid cases together with their copies on the other paths the suite tries them on
 * (chat with stream true, video in image_to_video mode, cloud speech with SSML).
 */
export function onEveryPath(ids: string[]): string[] {
  const paths: Record<string, string> = { chat: 'chat@stream', video: 'video@image', speech: 'speech@ssml' };
  return ids
    .flatMap((id) => {
      const [prefix, ...rest] = id.split('.');
      const other = paths[prefix!];
      return other ? [id, [other, ...rest].join('.')] : [id];
    })
    .sort();
}
