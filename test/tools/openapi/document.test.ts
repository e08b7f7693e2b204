import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERRORS } from '../../../src/contract/errors.js';
import {
  DEFAULT_SERVER_URL,
  buildOpenApi,
  openApiDocument,
  openApiText,
  packageInput,
} from '../../../src/tools/openapi/index.js';
import { packageLimits } from '../../../src/domain/limits.js';
import { operationId } from '../../../src/tools/openapi/operation.js';
import { faultable, operations, pathsOf } from '../../../src/contract/operations.js';
import { ROOT, SCHEMAS_DIR } from '../../../src/lib/paths.js';
import { schemaId } from '../../../src/contract/schemas.js';
import { assertSchema } from '../../support/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const doc: Any = openApiDocument(DEFAULT_SERVER_URL, packageLimits());
const opOf = (path: string, method = 'post'): Any => doc.paths[path][method];
const props = (component: string): Any => doc.components.schemas[component].properties;

/** Every `$ref` value in a JSON tree, with where it was found. */
function refs(node: unknown, at = '#'): { ref: string; at: string }[] {
  if (Array.isArray(node)) return node.flatMap((v, i) => refs(v, `${at}/${i}`));
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([k, v]) =>
    k === '$ref' && typeof v === 'string' ? [{ ref: v, at }] : refs(v, `${at}/${k}`),
  );
}

const resolve = (pointer: string): unknown =>
  pointer
    .slice(2)
    .split('/')
    .reduce<Any>((o, k) => o?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], doc);

test('the document is valid OpenAPI 3.1 for @seriousme/openapi-schema-validator, references included', async () => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  assert.equal(result, { valid: true }, JSON.stringify(result.errors)?.slice(0, 2000));
  assert.is(validator.version, '3.1');
  assert.is(doc.openapi, '3.1.0');
  assert.is(doc.jsonSchemaDialect, 'https://json-schema.org/draft/2020-12/schema');
});

test('the validator does reject a document whose reference is still a schema $id, so the test above can fail', async () => {
  const broken = structuredClone(doc);
  broken.components.schemas.ChatCompletion.properties.usage.$ref = schemaId('usage.json');
  const result = await new Validator().validate(broken);
  assert.is(result.valid, false);
  assert.match(String(result.errors), /usage\.json/);
});

test('the document is self-contained: every $ref is local and resolves; no schema $id or $schema is left', () => {
  const all = refs(doc);
  assert.ok(all.length > 50);
  for (const { ref, at } of all) {
    assert.ok(ref.startsWith('#/'), `${at}: ${ref}`);
    assert.ok(resolve(ref) !== undefined, `${at}: ${ref} does not resolve`);
  }
  const text = JSON.stringify(doc);
  assert.not.match(text, /unified-ai-mock\.dev\/schemas/);
  assert.not.match(text, /"\$(id|schema|defs)"/);
});

test('every operation of the table appears exactly once, under its path and method, with its table id', () => {
  const seen: string[] = [];
  for (const [path, item] of Object.entries<Any>(doc.paths)) {
    for (const [method, op] of Object.entries<Any>(item))
      seen.push(`${method.toUpperCase()} ${path} ${op['x-unified-ai-mock'].operation}`);
  }
  const expected = operations.map((op) => `${op.method} ${op.path.replace(/:(\w+)/g, '{$1}')} ${op.id}`);
  assert.equal(seen.sort(), expected.sort());
  const ids = operations.map((op) => opOf(op.path.replace(/:(\w+)/g, '{$1}'), op.method.toLowerCase()).operationId);
  assert.is(new Set(ids).size, operations.length, 'operationIds are unique');
  for (const op of operations) {
    const o = opOf(op.path.replace(/:(\w+)/g, '{$1}'), op.method.toLowerCase());
    assert.equal(o['x-unified-ai-mock'], { operation: op.id, extension: !op.documented, paths: pathsOf(op) }, op.id);
    assert.match(o.operationId, /^[a-z][A-Za-z0-9]*$/, op.id);
    assert.is(o.summary, op.doc.summary);
    assert.equal(o.tags, [op.doc.tag]);
    for (const p of op.path.match(/:\w+/g) ?? [])
      assert.ok(
        o.parameters.some((x: Any) => x.in === 'path' && x.name === p.slice(1) && x.required),
        `${op.id} ${p}`,
      );
  }
  assert.is(operationId('admin.faults.list'), 'adminFaultsList');
});

test('the seven documented operations are present, not marked as extensions, each with its limits from the API document', () => {
  const documented = operations.filter((op) => op.documented);
  assert.is(documented.length, 7);
  for (const op of documented) {
    const o = opOf(op.path, op.method.toLowerCase());
    assert.is(o['x-unified-ai-mock'].extension, false, op.id);
    assert.not.ok(['Mock extensions', 'Admin'].includes(o.tags[0]), op.id);
    assert.equal(o.security, [{ bearerAuth: [] }], op.id);
    assert.ok(
      o.responses['400'] && o.responses['401'] && o.responses['429'] && o.responses['500'],
      `${op.id}: documented errors`,
    );
  }
  const chat = props('ChatRequest');
  assert.equal(
    [chat.temperature.minimum, chat.temperature.maximum, chat.top_p.minimum, chat.top_p.maximum],
    [0, 2, 0, 1],
  );
  assert.equal(chat.stop, { type: 'array', items: { type: 'string' } });
  assert.equal(doc.components.schemas.ChatRequest.required, ['model', 'messages']);
  const images = props('ImageGenerationRequest');
  assert.is(images.prompt.maxLength, 1000);
  assert.equal(images.size.enum, ['1024x1024', '1792x1024', '1024x1792']);
  assert.equal(
    [images.quality.enum, images.style.enum],
    [
      ['standard', 'hd'],
      ['natural', 'vivid'],
    ],
  );
  assert.match(opOf('/text-provider/images/generations').description, /`dall-e-3`: `n` at most 1\b/);
  assert.equal(doc.components.schemas.ImageEditRequest.required, ['prompt', 'image']);
  assert.not.ok('model' in props('ImageEditRequest'));
  const video = props('VideoRequest');
  assert.equal(video.duration.enum, [4, 8, 16]);
  assert.equal(video.mode.enum, ['text_to_video', 'image_to_video']);
  assert.equal(doc.components.schemas.VideoRequest.then, { required: ['image_url'] });
  assert.is(props('VoiceTtsRequest').text.maxLength, 2500);
  const cloud = props('CloudSpeechRequest');
  assert.equal([cloud.rate.minimum, cloud.rate.maximum, cloud.pitch.minimum, cloud.pitch.maximum], [-50, 50, -50, 50]);
  assert.ok(doc.paths['/v1/me'].get, 'GET /v1/me');
});

test('request schemas survive into the document unchanged (only $id and $schema dropped)', () => {
  for (const op of operations.filter((o) => o.requestSchema && o.documented)) {
    const file = op.requestSchema!.slice(op.requestSchema!.lastIndexOf('/') + 1);
    const { $id: _id, $schema: _s, ...original } = JSON.parse(readFileSync(join(SCHEMAS_DIR, file), 'utf8'));
    const ref = opOf(op.path).requestBody.content['application/json'].schema.$ref;
    assert.equal(resolve(ref), original, file);
  }
});

test('responses: JSON schemas, binary audio, the chat event stream, and the documented errors with examples from the error table', () => {
  assert.equal(opOf('/voice-provider/tts').responses['200'].content, {
    'audio/mpeg': { schema: { type: 'string', format: 'binary', contentMediaType: 'audio/mpeg' } },
  });
  assert.ok(opOf('/cloud-provider/speech').responses['200'].content['audio/wav']);
  const chat = opOf('/text-provider/chat/completions').responses['200'].content;
  assert.is(chat['application/json'].schema.$ref, '#/components/schemas/ChatCompletion');
  assert.match(chat['text/event-stream'].schema.description, /data: \[DONE\]/);
  assert.is(chat['text/event-stream']['x-unified-ai-mock'].event.$ref, '#/components/schemas/ChatCompletionChunk');
  assert.is(opOf('/__admin/faults').responses['201'].description, 'Created.');
  assert.equal(Object.keys(opOf('/__health', 'get').responses), ['200']);
  for (const [row, template] of Object.entries(ERRORS)) {
    const name = row.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());
    const example = doc.components.examples[name];
    assert.ok(example, row);
    assert.equal(
      example.value.error,
      { message: template.message, type: template.type, param: null, code: template.code },
      row,
    );
    assertSchema('error.json', example.value);
    const response = Object.values<Any>(doc.components.responses).find(
      (r) => r.content['application/json'].examples?.[name],
    );
    assert.ok(response, `${row} is an example of a response`);
  }
  assertSchema('error.json', doc.components.examples.InjectedServiceUnavailable.value);
  assert.ok(doc.components.responses.Unauthorized.headers['WWW-Authenticate']);
  assert.ok(doc.components.responses.TooManyRequests.headers['Retry-After-Ms']);
  // Operations that take a body name the fields they ignored.
  for (const op of operations) {
    const success = opOf(op.path.replace(/:(\w+)/g, '{$1}'), op.method.toLowerCase()).responses[
      String(op.success.status ?? 200)
    ];
    const ignored = success.headers['X-Mock-Ignored-Fields'];
    if (op.requestSchema) assert.is(ignored?.$ref, '#/components/headers/XMockIgnoredFields', op.id);
    else assert.is(ignored, undefined, op.id);
  }
  assert.is(doc.components.headers.XMockIgnoredFields['x-unified-ai-mock'].extension, true);
});

test('an operation that serves byte ranges lists the Range header, a 206 with Content-Range, Accept-Ranges and the 416', () => {
  const ranged = operations.filter((op) => op.success.ranges).map((op) => op.id);
  assert.equal(ranged, ['media.image', 'media.video', 'admin.requests.body']);
  for (const op of operations) {
    const o = opOf(op.path.replace(/:(\w+)/g, '{$1}'), op.method.toLowerCase());
    const takes = op.success.ranges === true;
    assert.is('206' in o.responses, takes, op.id);
    assert.is('416' in o.responses, takes, op.id);
    assert.is(
      (o.parameters ?? []).some((p: Any) => p.$ref === '#/components/parameters/Range'),
      takes,
      op.id,
    );
    assert.is('Accept-Ranges' in o.responses[String(op.success.status ?? 200)].headers, takes, op.id);
  }
  for (const path of [
    '/media/images/{size}/{file}',
    '/media/videos/{resolution}/{duration}/{file}',
    '/__admin/requests/{id}/body',
  ]) {
    const responses = opOf(path, 'get').responses;
    assert.is(responses['206'].headers['Content-Range'].$ref, '#/components/headers/ContentRange', path);
    assert.is(responses['206'].headers['Accept-Ranges'].$ref, '#/components/headers/AcceptRanges', path);
    assert.equal(responses['206'].content, responses['200'].content, path);
    assert.is(responses['416'].$ref, '#/components/responses/RangeNotSatisfiable', path);
  }
  assert.equal(Object.keys(opOf('/media/videos/{resolution}/{duration}/{file}', 'get').responses['206'].content), [
    'video/mp4',
  ]);
  const refused = doc.components.responses.RangeNotSatisfiable;
  assert.is(refused.headers['Content-Range'].$ref, '#/components/headers/ContentRange');
  assert.is(
    refused.content['application/json'].examples.RangeNotSatisfiable.$ref,
    '#/components/examples/RangeNotSatisfiable',
  );
  assert.is(doc.components.examples.RangeNotSatisfiable.value.error.code, 'range_not_satisfiable');
  const pattern = new RegExp(doc.components.headers.ContentRange.schema.pattern);
  for (const good of ['bytes 0-9/10', 'bytes */1234']) assert.match(good, pattern);
  for (const bad of ['bytes 0-9', 'bytes=0-9/10', 'bytes */']) assert.not.match(bad, pattern);
  assert.is(doc.components.parameters.Range.in, 'header');
  assert.is(doc.components.parameters.Range.required, false);
});

test('security: bearer keys, no credentials for public routes, the admin rule for /__admin', () => {
  assert.equal(doc.components.securitySchemes.bearerAuth, {
    ...doc.components.securitySchemes.bearerAuth,
    type: 'http',
    scheme: 'bearer',
  });
  assert.is(doc.components.securitySchemes.adminToken['x-unified-ai-mock'].extension, true);
  for (const op of operations) {
    const o = opOf(op.path.replace(/:(\w+)/g, '{$1}'), op.method.toLowerCase());
    const expected = op.auth === 'key' ? [{ bearerAuth: [] }] : op.auth === 'admin' ? [{ adminToken: [] }, {}] : [];
    assert.equal(o.security, expected, op.id);
  }
});

test('control headers are optional header parameters of every faultable operation, marked as extensions', () => {
  for (const name of ['XMockFault', 'Prefer', 'XMockPacing', 'XMockReplyRule']) {
    const p = doc.components.parameters[name];
    assert.is(p.in, 'header');
    assert.is(p.required, false);
    assert.equal(p['x-unified-ai-mock'], { extension: true });
  }
  for (const op of operations) {
    const o = opOf(op.path.replace(/:(\w+)/g, '{$1}'), op.method.toLowerCase());
    const headers = (o.parameters ?? []).flatMap((p: Any) => (p.$ref ? [p.$ref.split('/').pop()] : []));
    assert.is(headers.includes('XMockFault') && headers.includes('Prefer'), faultable(op), op.id);
    assert.is('default' in o.responses, faultable(op), op.id);
    assert.is(headers.includes('XMockReplyRule'), op.id === 'chat.completions', op.id);
  }
  assert.equal(doc.components.parameters.XMicrosoftOutputFormat.schema.default, 'riff-24khz-16bit-mono-pcm');
});

test('info carries the package version; the output is deterministic and the server URL is the only difference', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  assert.is(doc.info.version, pkg.version);
  assert.equal(
    doc.servers.map((s: Any) => s.url),
    ['http://127.0.0.1:4010'],
  );
  assert.is(
    JSON.stringify(buildOpenApi(packageInput(packageLimits()))),
    JSON.stringify(buildOpenApi(packageInput(packageLimits()))),
  );
  const other = JSON.parse(openApiText('http://mock.test:9', packageLimits()));
  assert.equal(
    other.servers.map((s: Any) => s.url),
    ['http://mock.test:9'],
  );
  assert.equal({ ...other, servers: [] }, { ...doc, servers: [] });
  assert.equal(Object.keys(other), Object.keys(doc));
  assert.ok(openApiText(DEFAULT_SERVER_URL, packageLimits()).endsWith('}\n'));
});

test('a table with two operations on one method and path is refused', () => {
  const input = packageInput(packageLimits());
  assert.throws(
    () => buildOpenApi({ ...input, operations: [...input.operations, input.operations[0]!] }),
    /Two operations for POST/,
  );
  assert.throws(() => buildOpenApi({ ...input, errorSchema: schemaId('usage.json') }), /must be named Error/);
});

test.run();
