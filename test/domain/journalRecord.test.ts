// The request record's one definition (src/domain/journal/record.ts) against what is derived from it: the
// entry and its JSON (the admin API, the events feed, the Redis store and the inspector read it), the
// fields an unread entry keeps, and the column store. A new field of the table needs a sample below (the
// type of SAMPLES asks for one), and then every check here covers it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  Journal,
  Masking,
  toEntry,
  type EntryJson,
  type JournalEntry,
  type RequestRecord,
} from '../../src/domain/journal/journal.js';
import { Columns } from '../../src/domain/journal/columns.js';
import { DRAFT_FIELDS, FIELDS, RECORD_FIELDS, type FieldName } from '../../src/domain/journal/record.js';
import { reportRequest } from '../../src/pipeline/requestContext.js';
import { requestState } from '../../src/pipeline/steps.js';
import type { IncomingMessage } from 'node:http';
import { SharedTexts } from '../../src/domain/journal/texts.js';
import { Unread, hasRare } from '../../src/domain/journal/unread.js';
import { packageLimits } from '../../src/domain/limits.js';

const RECORDS = packageLimits().records;

const SECRET = 'sk-live-secret-0123456789';

/** A value for every field of the record; the texts a client may have put a secret in hold one. */
const SAMPLES: { readonly [K in FieldName]-?: Exclude<RequestRecord[K], undefined> } = {
  requestId: `req_${SECRET}`,
  time: 17,
  method: 'POST',
  path: `/v1/${SECRET}`,
  operation: `op ${SECRET}`,
  keyLabel: `label ${SECRET}`,
  status: 201,
  latencyMs: 2.5,
  errorCode: `code ${SECRET}`,
  details: [{ param: SECRET, code: 'c', message: 'm' }],
  fault: `fault ${SECRET}`,
  stream: `stream ${SECRET}`,
  retryCount: 3,
  model: `model ${SECRET}`,
  responseBody: '{"ok":true}',
  sse: { events: [{ ms: 1, data: 'data: {}' }], total: 1 },
  streamLateMs: 2.5,
  profile: `profile ${SECRET}`,
  queuedMs: 12.5,
  promptTokens: 9,
  completionTokens: 31,
  ignoredFields: ['/extra'],
  retryAfterMs: 700,
  violations: [{ rule: 'response.status', expected: '200', actual: '500' }],
  request: { headers: { 'x-h': 'v' }, body: '{}' },
  responseHead: 'HTTP/1.1 201 Created\r\nx-request-id: r\r\ncontent-type: application/json\r\n\r\n',
  responseHeaders: { 'content-type': 'application/json' },
  bodyHash: 'ab12',
  responseBodyChars: 11,
  responseBytes: 5,
};
const names = Object.keys(FIELDS) as FieldName[];
const inEntry = names.filter((name) => FIELDS[name].entry !== 'none');
const only = (keep: (name: FieldName) => boolean): RequestRecord =>
  Object.fromEntries(
    names.filter((n) => FIELDS[n].always || keep(n)).map((n) => [n, keep(n) ? SAMPLES[n] : undefined]),
  ) as unknown as RequestRecord;

// Compile-time: the JSON of an entry has every field of the table but those never journalled, and no other.
type Missing = Exclude<Exclude<FieldName, 'responseHead'>, keyof EntryJson>;
type Extra = Exclude<keyof EntryJson, FieldName>;
const agree: [Missing, Extra] extends [never, never] ? true : false = true;

test('the table lists the record in order, and every sample is of its field', () => {
  assert.ok(agree);
  assert.equal(RECORD_FIELDS, names);
  assert.equal(Object.keys(SAMPLES), names, 'one sample per field, in the table order');
});

test("every field of the table reaches an entry's JSON (the admin API, the events feed, Redis), masked or kept as the table says", () => {
  const { responseHead: _head, ...full } = SAMPLES;
  const json = JSON.parse(JSON.stringify(toEntry(full as RequestRecord, new Masking(RECORDS, [SECRET])))) as Record<
    string,
    unknown
  >;
  assert.equal(Object.keys(json).sort(), [...inEntry].sort());
  for (const name of inEntry) {
    const rule = FIELDS[name].entry;
    if (rule === 'kept') assert.equal(json[name], SAMPLES[name], name);
    if (rule === 'masked' || rule === 'scrubbed') {
      assert.type(json[name], 'string', name);
      assert.not.ok((json[name] as string).includes(SECRET), `${name} is masked`);
      assert.ok((json[name] as string).includes('sk-l...6789'), `${name} shows the masked key`);
    }
  }
  // A field the table never journals is not in an entry even when the record has it.
  const withHead = toEntry(SAMPLES as RequestRecord, new Masking(RECORDS));
  for (const name of names) if (FIELDS[name].entry === 'none') assert.not.ok(name in withHead, name);
});

test('an unread record keeps every field of the table, the rare ones apart, and gives each back', () => {
  const texts = new SharedTexts();
  const back = new Unread(SAMPLES as RequestRecord, texts).record() as unknown as Record<string, unknown>;
  for (const name of names) {
    if (name === 'request' || name === 'responseHead') continue; // held as shared texts: compared below
    assert.equal(back[name], SAMPLES[name], name);
  }
  assert.equal(back.request, SAMPLES.request);
  const cut = { headers: { 'x-h': 'v' }, body: '{"a":', bodyChars: 9000 };
  assert.equal(new Unread({ ...SAMPLES, request: cut }, texts).record().request, cut, "a request's bodyChars too");
  assert.ok(
    SAMPLES.responseHead.endsWith((back.responseHead as string).slice(2)),
    'the head without its status and id lines',
  );
  // A record without the rare fields holds none of them (they are all absent or undefined when read back).
  const common = new Unread(
    only((n) => !FIELDS[n].rare),
    texts,
  ).record() as unknown as Record<string, unknown>;
  for (const name of names) if (FIELDS[name].rare) assert.is(common[name], undefined, name);
});

test('hasRare knows every rare field of the table, and only those', () => {
  for (const name of names) {
    const record = only((n) => n === name);
    assert.is(hasRare(record), FIELDS[name].rare, name);
    assert.is(hasRare(record, false), FIELDS[name].rare && name !== 'details', `${name}, details apart`);
  }
  assert.ok(hasRare({ ...only(() => false), request: { headers: {}, bodyChars: 3 } }), "a request's bodyChars is rare");
});

test('the column store holds every common field of the table, and gives each back', () => {
  const record = only((n) => !FIELDS[n].rare || n === 'details');
  const columns = new Columns(1);
  assert.ok(columns.put(0, record, new SharedTexts()), 'a record of common fields goes into columns');
  const back = columns.record(0) as unknown as Record<string, unknown>;
  for (const name of names) {
    if (name === 'request' || name === 'responseHead') continue;
    assert.equal(back[name], (record as unknown as Record<string, unknown>)[name], name);
  }
  // And through the journal: the entry read later (from columns) is the entry made at once.
  const later = new Journal(1, RECORDS, [SECRET]);
  later.record(record);
  const seen: JournalEntry[] = [];
  const watched = new Journal(1, RECORDS, [SECRET]);
  watched.subscribe((e) => seen.push(e), 1);
  watched.record(record);
  assert.equal(later.entries(), seen);
  // Each rare field sends a record to an object instead (a 400's details apart).
  for (const name of names) {
    if (!FIELDS[name].rare || name === 'details') continue;
    assert.not.ok(new Columns(1).put(0, { ...record, [name]: SAMPLES[name] }, new SharedTexts()), name);
  }
});

test("every drafted field the pipeline sets on a request's state reaches the record as it is, and only when set", () => {
  const report = (state: ReturnType<typeof requestState>): Record<string, unknown> => {
    const seen: RequestRecord[] = [];
    const req = { method: 'POST', headers: {} } as IncomingMessage;
    reportRequest({ observers: [(r) => seen.push(r)], maxModelChars: 64 }, req, '/v1/x', state, 200, 0);
    return seen[0] as unknown as Record<string, unknown>;
  };
  assert.ok(DRAFT_FIELDS.length > 0);
  const state = requestState('req_1');
  for (const name of DRAFT_FIELDS) assert.ok(name in state, `${name} is there from the start (one object shape)`);
  for (const name of DRAFT_FIELDS) (state as unknown as Record<string, unknown>)[name] = SAMPLES[name];
  const full = report(state);
  for (const name of DRAFT_FIELDS) assert.is(full[name], SAMPLES[name], name);
  // Unset: a field every record has is there, undefined; an optional one is absent.
  const bare = report(requestState('req_2'));
  for (const name of DRAFT_FIELDS) assert.is(name in bare, FIELDS[name].always, name);
});

test.run();
