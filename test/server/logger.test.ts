import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { packageLimits } from '../../src/domain/limits.js';
import { createLogger, errorLogger, flushLogger, requestLogger } from '../../src/server/logger.js';
import { LogWriter } from '../../src/server/logWriter.js';
import type { RunningMock } from '../../src/server/server.js';
import {
  capture,
  get,
  post,
  request,
  requestRecord,
  withLogFile,
  withLoggedMock,
  type Captured,
} from '../support/index.js';

const RECORDS = packageLimits().records;
const SECRET = 'sk-live-0123456789abcdefSECRET';
const ADMIN = 'admin-token-0123456789';
const KEYS = [
  { key: SECRET, label: 'mine' },
  { key: 'sk-mock-default', label: 'default' },
];

/** A mock with these keys and admin token, logging at `level` to a capture. */
const logged = (
  level: 'info' | 'warn' | 'silent',
  fn: (mock: RunningMock, out: Captured) => Promise<void>,
): Promise<void> => withLoggedMock({ keys: KEYS, adminToken: ADMIN, logLevel: level }, fn);

test('one JSON line per request with id, operation, status, latency, fault, stream and the masked key', async () => {
  await logged('info', async (mock, out) => {
    const ok = await get(mock.url, '/v1/me', SECRET);
    const bad = await post(mock.url, '/text-provider/chat/completions', { model: 'gpt-4o' }, SECRET);
    const streamed = await post(
      mock.url,
      '/text-provider/chat/completions',
      { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      SECRET,
    );
    assert.is(streamed.status, 200);
    const records = out.records();
    assert.is(records.length, 3, out.lines.join('\n'));
    const [me, invalid, stream] = records as Record<string, unknown>[];
    assert.equal(
      {
        reqId: me!.reqId,
        method: me!.method,
        path: me!.path,
        operation: me!.operation,
        status: me!.status,
        fault: me!.fault,
        keyLabel: me!.keyLabel,
        level: me!.level,
        msg: me!.msg,
      },
      {
        reqId: ok.headers['x-request-id'],
        method: 'GET',
        path: '/v1/me',
        operation: 'me',
        status: 200,
        fault: null,
        keyLabel: 'sk-l...CRET',
        level: 'info',
        msg: 'request',
      },
    );
    assert.type(me!.latencyMs, 'number');
    assert.type(me!.time, 'string');
    assert.is(invalid!.reqId, bad.headers['x-request-id']);
    assert.is(invalid!.status, 400);
    assert.is(invalid!.errorCode, 'missing_required_parameter');
    assert.is(stream!.stream, 'completed');
  });
});

test('no configured key or admin token reaches the log, wherever the client puts it', async () => {
  await logged('info', async (mock, out) => {
    await get(mock.url, `/v1/me?api_key=${SECRET}`, SECRET);
    await get(mock.url, `/${SECRET}/v1/me`, SECRET);
    await post(
      mock.url,
      '/text-provider/chat/completions',
      { model: SECRET, messages: [{ role: 'user', content: SECRET }] },
      SECRET,
    );
    await post(
      mock.url,
      '/text-provider/chat/completions',
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
      `${SECRET}x`,
    );
    await request(mock.url, '/v1/me', { headers: { authorization: `Basic ${SECRET}`, 'x-request-id': SECRET } });
    await get(mock.url, '/__admin/journal', null, { authorization: `Bearer ${ADMIN}` });
    const encoded = SECRET.replace('-', '%2D').replace('S', '%53');
    await request(mock.url, `/v1/${encoded}`, { key: null }); // percent-encoded
    await request(mock.url, `/${'x'.repeat(250)}${SECRET}`, { key: null }); // across the point where long paths are cut
    const text = out.lines.join('\n');
    assert.ok(out.lines.length >= 7, text);
    assert.not.ok(text.includes(SECRET), text);
    assert.not.ok(text.includes(encoded), text);
    assert.not.ok(text.includes(`${'x'.repeat(250)}sk-li`), 'no part of a cut key either');
    assert.ok(text.includes('"path":"/v1/sk-l...CRET"'), text);
    assert.not.ok(text.includes(ADMIN), text);
    assert.ok(text.includes('sk-l...CRET'), 'the masked form stays readable');
  });
});

test('health checks are logged at debug, so a container probe does not fill the log at info', async () => {
  await logged('info', async (mock, out) => {
    await get(mock.url, '/__health', null);
    await get(mock.url, '/v1/me', SECRET);
    assert.equal(
      out.records().map((r) => r.path),
      ['/v1/me'],
    );
  });
  const out = capture();
  const logger = createLogger({ logLevel: 'debug', keys: KEYS }, out);
  const base = requestRecord({
    requestId: 'r',
    time: 0,
    path: '/__health',
    operation: 'health',
    keyLabel: undefined,
    errorCode: null,
  });
  requestLogger(logger, RECORDS)({ ...base, status: 200 });
  requestLogger(logger, RECORDS)({ ...base, status: 503 });
  assert.equal(
    out.records().map((r) => [r.level, r.status]),
    [
      ['debug', 200],
      ['warn', 503],
    ],
  );
  // Lines go to the destination createLogger was given, known without reading pino's own fields: a logger
  // made elsewhere is refused at once, not written to through a field pino may rename.
  assert.throws(() => requestLogger(logger.child({}), RECORDS), /a logger made by createLogger/);
});

test('every request line is the line pino writes for its fields, as each field changes and changes back', () => {
  const out = capture();
  const logger = createLogger({ logLevel: 'info', keys: KEYS }, out);
  const log = requestLogger(logger, RECORDS, { keys: KEYS });
  const base = {
    requestId: 'req_1',
    // 2026-01-01T00:00:00.123Z: the line says the record's time, to the millisecond.
    time: 1767225600123,
    method: 'POST',
    path: '/v1/text-provider/chat/completions',
    operation: 'chat.completions' as string | undefined,
    keyLabel: 'sk-m...ault' as string | undefined,
    status: 200,
    latencyMs: 1.25,
    errorCode: undefined as string | null | undefined,
    details: undefined,
    fault: undefined as string | undefined,
    stream: undefined as string | undefined,
    retryCount: undefined as number | undefined,
    model: 'gpt-4o' as string | undefined,
  };
  const changes: Partial<typeof base>[] = [
    {},
    { requestId: 'req_2', latencyMs: 3 },
    // Another second, and milliseconds with leading zeros.
    { time: 1767225661007 },
    { time: 1767225600000 },
    { time: 1767225600999 },
    // An id of the safe characters only is quoted as it is; any other is escaped as JSON.
    { requestId: 'client-1.a:B_9' },
    { requestId: 'a "quoted" \\ id\u0001' },
    { requestId: 'a"b' },
    { requestId: 'a\\b' },
    { requestId: 'café' },
    { requestId: 'tab\there\u007f' },
    { method: 'GET' },
    { path: '/v1/me' },
    { operation: 'me' },
    { operation: undefined },
    { status: 400 },
    { fault: 'status=503 [header]' },
    { stream: 'completed' },
    { keyLabel: 'sk-l...CRET' },
    { keyLabel: undefined },
    { errorCode: 'invalid_type' },
    { errorCode: null },
    { model: 'gpt-4o-mini' },
    { model: undefined },
    { retryCount: 2 },
    { latencyMs: Number.NaN },
    // Latencies as the record rounds them (hundredths), and one it did not round.
    { latencyMs: 0.07 },
    { latencyMs: 12345.5 },
    { latencyMs: 0 },
    { latencyMs: 1.234 },
  ];
  const expected: string[] = [];
  // Each change alone, then the base again, so every field changes and changes back.
  for (const change of changes.flatMap((c) => [c, {}])) {
    const r = { ...base, ...change };
    log(r);
    // The record's time, as toISOString writes it.
    const time = new Date(r.time).toISOString();
    const fields = {
      reqId: r.requestId,
      method: r.method,
      path: r.path,
      operation: r.operation ?? null,
      status: r.status,
      latencyMs: Number.isFinite(r.latencyMs) ? r.latencyMs : null,
      fault: r.fault ?? null,
      stream: r.stream ?? null,
      keyLabel: r.keyLabel ?? null,
      errorCode: r.errorCode ?? null,
      model: r.model ?? null,
      retryCount: r.retryCount ?? null,
    };
    expected.push(JSON.stringify({ level: 'info', time, ...fields, msg: 'request' }));
  }
  assert.equal(out.lines, expected);
});

test('request lines written as bytes into the stdout writer are the lines written as text to any other destination', () =>
  withLogFile(async (fd, file) => {
    const writer = new LogWriter(fd, { minWrite: 4096, maxWrite: 8192 });
    const text = capture();
    const toFile = requestLogger(createLogger({ logLevel: 'info', keys: KEYS }, writer), RECORDS, { keys: KEYS });
    const toText = requestLogger(createLogger({ logLevel: 'info', keys: KEYS }, text), RECORDS, { keys: KEYS });
    const base = requestRecord({
      method: 'POST',
      path: '/v1/text-provider/chat/completions',
      operation: 'chat.completions',
      latencyMs: 1.25,
      model: 'gpt-4o',
    });
    const records = [
      base,
      { ...base, requestId: 'a "quoted" \\ id\u0001 é', latencyMs: 0.07 },
      { ...base, path: `/v1/ünïcode/${SECRET}/😀`, status: 404, operation: undefined, latencyMs: Number.NaN },
      // A line longer than the writer's buffer.
      { ...base, model: 'm'.repeat(10_000), fault: 'status=503', errorCode: 'x', latencyMs: 12345.5 },
      { ...base, status: 500, latencyMs: 1.234, retryCount: 3 },
      // More lines than the logger keeps aside before it makes them, across changes of the second.
      ...Array.from({ length: 2500 }, (_, i) => ({
        ...base,
        requestId: `req_${i}`,
        latencyMs: i / 4,
        time: base.time + i * 7,
      })),
    ];
    for (const r of records) {
      toFile(r);
      toText(r);
    }
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    // The two loggers write at different milliseconds: the times are compared as times, the rest as bytes.
    const untimed = (line: string) => line.replace(/"time":"[^"]*"/, '"time":""');
    const written = readFileSync(file, 'utf8').split('\n').slice(0, -1);
    assert.is(written.length, records.length);
    assert.equal(written.map(untimed), text.lines.map(untimed));
    assert.not.ok(written.join('\n').includes(SECRET));
  }));

test('into the stdout writer, request lines come before any line logged after them, and a flush writes them', () =>
  withLogFile(async (fd, file) => {
    const logger = createLogger({ logLevel: 'info', keys: KEYS }, new LogWriter(fd));
    const log = requestLogger(logger, RECORDS, { keys: KEYS });
    for (let i = 0; i < 3; i++) log(requestRecord({ requestId: `req_${i}` }));
    logger.info({ signal: 'SIGTERM' }, 'shutting down');
    log(requestRecord({ requestId: 'req_3' }));
    await flushLogger(logger);
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { reqId?: string; msg: string });
    assert.equal(
      lines.map((l) => l.reqId ?? l.msg),
      ['req_0', 'req_1', 'req_2', 'shutting down', 'req_3'],
    );
  }));

test('--log-level: warn drops request lines of successful requests; silent drops everything', async () => {
  await logged('warn', async (mock, out) => {
    await get(mock.url, '/v1/me', SECRET);
    assert.equal(out.lines, []);
  });
  await logged('silent', async (mock, out) => {
    await get(mock.url, '/v1/me', 'wrong-key');
    assert.equal(out.lines, []);
  });
});

test('a connection answered outside the app (bad HTTP) is logged as a client error', async () => {
  await logged('info', async (mock, out) => {
    const { connect } = await import('node:net');
    await new Promise<void>((resolve) => {
      const s = connect(mock.port, '127.0.0.1', () => s.write('NOT HTTP\r\n\r\n'));
      s.on('data', () => {});
      s.on('close', () => resolve());
    });
    const line = out.records().find((r) => r.msg === 'client error');
    assert.equal({ status: line?.status, errorCode: line?.errorCode }, { status: 400, errorCode: 'malformed_request' });
  });
});

test('unexpected errors are logged with their stack, keys scrubbed, query strings dropped', async () => {
  const out = capture();
  const logger = createLogger({ logLevel: 'info', keys: KEYS }, out);
  errorLogger(logger, RECORDS)(new Error(`failed for ${SECRET}`), {
    method: 'POST',
    url: `/v1/x?key=${SECRET}`,
    requestId: 'req_1',
  });
  const [line] = out.records();
  assert.is(line!.msg, 'unexpected error');
  assert.is(line!.path, '/v1/x');
  assert.match(String((line!.err as { stack: string }).stack), /failed for sk-l\.\.\.CRET\n\s+at /);
  assert.not.ok(out.lines[0]!.includes(SECRET));
});

test('redaction: fields named like credentials are censored even if a caller logs them', () => {
  const out = capture();
  const logger = createLogger({ logLevel: 'info', keys: KEYS }, out);
  logger.info(
    { authorization: 'Bearer abc', headers: { authorization: 'x' }, apiKey: 'y', nested: { token: 'z' } },
    'x',
  );
  const [line] = out.records();
  assert.equal(
    [
      line!.authorization,
      (line!.headers as Record<string, string>).authorization,
      line!.apiKey,
      (line!.nested as Record<string, string>).token,
    ],
    ['[redacted]', '[redacted]', '[redacted]', '[redacted]'],
  );
});

test('requestLogger marks a 5xx nobody asked for as a warning, and flushLogger resolves', async () => {
  const out = capture();
  const logger = createLogger({ logLevel: 'info', keys: KEYS }, out);
  const base = requestRecord({
    requestId: 'r',
    time: 0,
    path: '/x',
    operation: undefined,
    keyLabel: undefined,
    errorCode: null,
  });
  requestLogger(logger, RECORDS)({ ...base, status: 500, fault: undefined });
  requestLogger(logger, RECORDS)({ ...base, status: 503, fault: 'status' });
  assert.equal(
    out.records().map((r) => r.level),
    ['warn', 'info'],
  );
  await flushLogger(logger);
  await flushLogger(undefined);
});

test.run();
