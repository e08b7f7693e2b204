// A whole answer from the upstream: read (bounded), judged, recorded, and given to respond as the reply.
import { ApiError, templateForStatus } from '../contract/errors.js';
import { baseUrlOf } from '../pipeline/callHandler.js';
import type { StepResult } from '../pipeline/steps.js';
import { isText } from './cassette.js';
import type { InFlight, Upstream } from './upstream.js';
import { relayHeaders, rewriteLinks } from './headers.js';
import { responseViolations, violationsHeader } from './validation.js';

const MAX_UPSTREAM_BODY = 256 * 1024 * 1024;

/** Reads the upstream's body, judges the exchange and makes the reply; busy and failing answers are not recorded. */
export async function forwardBody(up: Upstream, f: InFlight): Promise<StepResult> {
  const { ctx, state, res, judged } = f;
  let body: Buffer;
  try {
    body = await readCapped(res, MAX_UPSTREAM_BODY);
  } catch (err) {
    f.unwatch();
    return new ApiError(templateForStatus(502), {
      code: 'upstream_failed',
      message: `The upstream's answer could not be read: ${up.scrub((err as Error).message)}`,
    });
  }
  f.unwatch();
  const exchange = { status: res.status, headers: f.headers, body, ms: Math.round(performance.now() - f.started) };
  const found = await responseViolations(judged, exchange, up.config.validationProfile, up.schemas);
  const violations = up.judge.judge(state, judged, res.status, found, performance.now() - f.started);
  const answerHeaders = relayHeaders(f.headers, up.scrub);
  const type = f.headers['content-type'];
  const recorder = up.recorder;
  if (recorder && !(res.status >= 500 || res.status === 429))
    recorder.record(state, f.op, ctx, async () => ({
      status: res.status,
      headers: answerHeaders,
      body: await recorder.store.storeBody(body, type),
    }));
  const headers: Record<string, string> = { ...answerHeaders };
  delete headers['content-type'];
  if (violations.length) headers['x-mock-violations'] = violationsHeader(violations);
  const sent = isText(type) ? rewriteLinks(body, up.base, baseUrlOf(ctx, up.services)) : body;
  state.reply = { kind: 'binary', status: res.status, contentType: type ?? '', body: sent, headers };
  return undefined;
}

async function readCapped(res: Response, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > cap) throw new Error(`the body passed ${cap} bytes`);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks);
}
