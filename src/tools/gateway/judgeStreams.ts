// The judges of streams and waits: the client's events against the upstream's journal of the events it wrote (what,
// and when, on one clock), concurrent streams kept apart, and how a hung or cut upstream ends the client's request.
import type { EntryJson } from '../../domain/journal/journal.js';
import type { JudgeName } from './cases.js';
import { answered, arrival, failed, first, inconclusive, mime, passed, sameJson, show, type Judge } from './judging.js';
import type { Sent } from './probe.js';
import { clientEvents, milestones, streamText, type Milestone, type TimedEvent } from './stream.js';

/** The client got an event stream (a 200 text/event-stream). */
const isStream = (x: Sent): boolean =>
  x.ex.status === 200 && mime(x.ex.headers['content-type']) === 'text/event-stream';

/** The upstream's stream of a request: the entry that wrote events, its events as journalled. */
function upstreamStream(x: Sent): { entry: EntryJson; events: TimedEvent[] } | undefined {
  const entry = [...x.upstream].reverse().find((e) => e.sse?.events.length);
  return entry && { entry, events: entry.sse!.events.map((e) => ({ data: e.data, ms: e.ms })) };
}

/** Why a stream case has nothing to judge: the gateway answered something else, or the upstream journalled no events. */
function noStream(x: Sent): string | undefined {
  if (!isStream(x))
    return `the client got ${answered(x)} instead of an event stream (gateway.forward.chat@stream judges that)`;
  const up = upstreamStream(x);
  if (!up)
    return x.upstream.length
      ? "the upstream's journal holds no events of the stream"
      : 'the request never reached the upstream';
  if (up.entry.sse!.total > up.events.length) return "the upstream's journal kept only part of the stream";
  return undefined;
}

const events: Judge = (gc, obs) => {
  const x = first(obs)!;
  const why = noStream(x);
  if (why) return inconclusive(why);
  const up = streamText(upstreamStream(x)!.events);
  const ours = streamText(clientEvents(x.ex));
  const problems: string[] = [];
  if (ours.content !== up.content) problems.push(`content ${show(ours.content)}, the upstream's ${show(up.content)}`);
  if (!sameJson(ours.finishes, up.finishes))
    problems.push(`finish_reason ${show(ours.finishes)}, the upstream's ${show(up.finishes)}`);
  if (up.usage !== undefined && !sameJson(ours.usage, up.usage))
    problems.push(`usage ${show(ours.usage)}, the upstream's ${show(up.usage)}`);
  if (ours.error !== undefined) problems.push(`an error event ${show(ours.error)}`);
  if (up.done && !ours.done) problems.push(`no data: [DONE] at the end${x.ex.error ? ` (${x.ex.error})` : ''}`);
  const told = `${up.content.length} characters, finish_reason ${up.finishes.join(', ') || 'none'}${up.usage ? ', usage' : ''}`;
  return problems.length
    ? failed(
        [
          {
            check: 'events',
            expected: "the upstream's content, finish_reason, usage and data: [DONE]",
            actual: problems.join('; '),
          },
        ],
        told,
      )
    : passed(told);
};

/** The stream's shared points with both ends' times, or why there are none. */
function timeline(x: Sent): Milestone[] | string {
  const why = noStream(x);
  if (why) return why;
  const up = upstreamStream(x)!;
  const points = milestones(up.events, clientEvents(x.ex), { upstream: arrival(up.entry), client: x.sentAt });
  if (!points) return "the client's content is not the upstream's (gateway.stream.events judges that)";
  // Both ends' times are on the epoch clock of one machine; a client that reads before the upstream wrote is another.
  if (points.some((p) => p.client < p.upstream - 50))
    return "the client read events before the upstream wrote them: the upstream's clock is not the runner's (run both on one machine)";
  return points;
}

const lag = (p: Milestone) => Math.round(p.client - p.upstream);

/** The upstream's events' times from its first, as text. */
const schedule = (points: readonly Milestone[]) =>
  points.map((p) => Math.round(p.upstream - points[0]!.upstream)).join(', ');

const firstEvent: Judge = (gc, obs, ctx) => {
  const points = timeline(first(obs)!);
  if (typeof points === 'string') return inconclusive(points);
  const held = lag(points[0]!);
  const told = `the upstream wrote its events at ${schedule(points)} ms; the client read the first ${held} ms after the upstream wrote it (bound ${ctx.firstEventBoundMs} ms)`;
  if (held <= ctx.firstEventBoundMs) return passed(told);
  const whole = held >= Math.round(points[points.length - 1]!.upstream - points[0]!.upstream);
  return failed(
    [
      {
        check: 'first-event',
        expected: `the first event within ${ctx.firstEventBoundMs} ms of the upstream writing it`,
        actual: `${told}${whole ? ': after the upstream had written the whole stream (buffered)' : ''}`,
      },
    ],
    told,
  );
};

const pacing: Judge = (gc, obs, ctx) => {
  const points = timeline(first(obs)!);
  if (typeof points === 'string') return inconclusive(points);
  if (lag(points[0]!) > ctx.firstEventBoundMs)
    return inconclusive('the first event was held already (gateway.stream.first-event judges that)');
  const later = points.slice(1);
  const worst = later.reduce<Milestone | undefined>((w, p) => (!w || lag(p) > lag(w) ? p : w), undefined);
  const told = `the upstream wrote at ${schedule(points)} ms, the client read at ${points.map((p) => Math.round(p.client - points[0]!.client)).join(', ')} ms`;
  if (!worst || lag(worst) <= ctx.firstEventBoundMs)
    return passed(`${told}; the longest hold ${worst ? lag(worst) : 0} ms`);
  return failed(
    [
      {
        check: 'pacing',
        expected: `every event within ${ctx.firstEventBoundMs} ms of the upstream writing it`,
        actual: `${worst.what} reached the client ${lag(worst)} ms after the upstream wrote it (${told})`,
      },
    ],
    told,
  );
};

/** How a client's stream ended: cut, with an error event, with [DONE], or cleanly without. */
function ending(x: Sent): { done: boolean; error?: string; events: number } {
  const evs = clientEvents(x.ex);
  const text = streamText(evs);
  const error = x.ex.error ?? (text.error !== undefined ? `an error event ${show(text.error)}` : undefined);
  return { done: text.done, ...(error ? { error } : {}), events: evs.length };
}

const cut: Judge = (gc, obs) => {
  const x = first(obs)!;
  const up = x.upstream.find((e) => e.stream === 'cut');
  if (!up)
    return inconclusive(
      x.upstream.length ? "the upstream's stream was not cut" : 'the request never reached the upstream',
    );
  const upEvents = up.sse?.total ?? 0;
  const expected = 'the stream ended as an error (a broken connection or an error event), without data: [DONE]';
  if (x.waitedOut)
    return failed([
      {
        check: 'stream-end',
        expected,
        actual: `the client's stream was still open ${x.waitMs} ms after the request (the upstream cut it after ${upEvents} events)`,
      },
    ]);
  if (!isStream(x)) {
    if (x.ex.status >= 400 || x.ex.status === 0) return passed(`the gateway answered ${answered(x)}`);
    return failed([{ check: 'stream-end', expected, actual: answered(x) }]);
  }
  const end = ending(x);
  if (end.done)
    return failed([
      {
        check: 'stream-end',
        expected,
        actual: `data: [DONE] after ${end.events - 1} events, as if complete (the upstream cut its stream after ${upEvents})`,
      },
    ]);
  if (end.error) return passed(`ended as an error after ${end.events} events: ${end.error}`);
  return passed(
    `ended by a clean close after ${end.events} events, without data: [DONE] or an error event (a client that waits for [DONE] sees the cut)`,
  );
};

const isolation: Judge = (gc, obs) => {
  const sent = first(obs) ? obs[0]!.sent : [];
  const streams = sent.filter(isStream);
  if (!streams.length)
    return inconclusive(
      `no stream reached the client: ${answered(sent[0]!)} (gateway.forward.chat@stream judges that)`,
    );
  const ups = sent.map(upstreamStream);
  const texts = ups.map((u) => (u ? streamText(u.events).content : undefined));
  const problems: string[] = [];
  sent.forEach((x, i) => {
    const n = i + 1;
    if (!ups[i]) return void problems.push(`stream ${n} never reached the upstream`);
    if (!isStream(x)) return void problems.push(`stream ${n}: ${answered(x)}`);
    const ours = streamText(clientEvents(x.ex)).content;
    if (ours === texts[i]) return;
    const other = sent.findIndex((y, j) => j !== i && ours.includes(y.request.token));
    problems.push(
      other >= 0
        ? `stream ${n} carried the text of stream ${other + 1} (${show(ours.slice(0, 80))})`
        : `stream ${n}: ${show(ours.slice(0, 80))}, its upstream's ${show(texts[i]!.slice(0, 80))}${x.ex.error ? ` (${x.ex.error})` : ''}`,
    );
  });
  if (problems.length)
    return failed([
      {
        check: 'isolation',
        expected: `each of the ${sent.length} streams its own upstream's content, whole`,
        actual: problems.join('; '),
      },
    ]);
  // The streams could mix only where they ran at the same time at the upstream.
  const spans = ups.map((u) => [arrival(u!.entry), u!.entry.time] as const);
  const overlap = Math.round(Math.min(...spans.map((s) => s[1])) - Math.max(...spans.map((s) => s[0])));
  if (overlap <= 0)
    return inconclusive('the gateway sent the streams to the upstream one after the other: nothing could mix');
  return passed(`${sent.length} streams ran together for ${overlap} ms at the upstream, each whole and its own`);
};

const timeout: Judge = (gc, obs, ctx) => {
  const sent = obs[0]?.sent ?? [];
  const problems: string[] = [];
  const told: string[] = [];
  let unreached = 0;
  for (const x of sent) {
    const where = x.request.streamed ? 'mid-stream' : 'before its answer';
    if (!x.upstream.length && !x.matched) {
      unreached++;
      told.push(`${where}: the request never reached the upstream (${answered(x)})`);
      continue;
    }
    if (x.waitedOut) {
      problems.push(
        `${where}: the client had no ${x.request.streamed ? 'end of its stream' : 'answer'} ${x.waitMs} ms after the request`,
      );
      continue;
    }
    if (x.request.streamed && isStream(x)) {
      const end = ending(x);
      if (end.done) problems.push(`${where}: the stream ended with data: [DONE] after ${x.ex.ms} ms, as if complete`);
      else told.push(`${where}: the stream ended after ${x.ex.ms} ms${end.error ? ` (${end.error})` : ''}`);
      continue;
    }
    if (x.ex.status >= 200 && x.ex.status <= 299)
      problems.push(`${where}: ${answered(x)} after ${x.ex.ms} ms, as if the upstream had answered`);
    else told.push(`${where}: ${x.ex.status ? `status ${x.ex.status}` : (x.ex.error ?? 'closed')} after ${x.ex.ms} ms`);
  }
  const bound = `the gateway's timeout ${ctx.gatewayTimeoutMs} ms (--gateway-timeout)`;
  if (problems.length)
    return failed(
      [
        {
          check: 'timeout',
          expected: `an error within ${bound}, and its grace`,
          actual: [...problems, ...told].join('; '),
        },
      ],
      told.join('; '),
    );
  if (unreached === sent.length) return inconclusive(told.join('; '));
  return passed(`${told.join('; ')}; ${bound}`);
};

export const STREAM_JUDGES: Readonly<
  Record<Extract<JudgeName, 'events' | 'first-event' | 'pacing' | 'cut' | 'isolation' | 'timeout'>, Judge>
> = {
  events,
  'first-event': firstEvent,
  pacing,
  cut,
  isolation,
  timeout,
};
