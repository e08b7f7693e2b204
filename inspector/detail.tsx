import { useEffect, useRef, useState } from 'preact/hooks';
import { records } from '../fixtures/limits.json';
import { bodyUrl, fullBody, type Entry } from './api.js';
import { JsonView, type Mark } from './json.js';
import { paramPath, pathKey, tone, type Chain } from './model.js';

/** A bound as the notes show it: 8 KiB, 32 MiB; a count of characters when it is no whole KiB. */
const size = (n: number): string =>
  n % 1048576 === 0 ? `${n / 1048576} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : `${n} characters`;

// What the journal and its body store keep: the bounds the server reads, from fixtures/limits.json (esbuild
// writes their values into the bundle), so the notes never state other figures than the server applies.
const KEPT_BODY = size(records.maxBodyChars);
const KEPT_RESPONSE = size(records.maxResponseBodyChars);
const HELD_BODIES = size(records.maxHeldResponseBytes);

function Headers({ headers, label }: { headers: Record<string, string> | undefined; label: string }) {
  const rows = Object.entries(headers ?? {});
  if (!rows.length) return <p class="muted">None recorded.</p>;
  return (
    <table class="kv" aria-label={label}>
      <tbody>
        {rows.map(([k, v]) => (
          <tr>
            <th scope="row">{k}</th>
            <td>{v}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function has(value: unknown, path: (string | number)[]): boolean {
  let at: unknown = value;
  for (const part of path) {
    if (!at || typeof at !== 'object' || !(part in (at as object))) return false;
    at = (at as Record<string, unknown>)[part as string];
  }
  return true;
}

/** Each violation on the field it names, or on the whole body when the field is missing from it. */
function marksOf(entry: Entry, body: unknown): Map<string, Mark[]> {
  const marks = new Map<string, Mark[]>();
  for (const d of entry.details ?? []) {
    const path = d.param ? paramPath(d.param) : [];
    const key = pathKey(has(body, path) ? path : []);
    marks.set(key, [...(marks.get(key) ?? []), { code: d.code ?? 'invalid', message: d.message ?? '' }]);
  }
  return marks;
}

/** A body text parsed as JSON, unless it was cut (a cut body is shown as the text it is) or is not JSON. */
function parseWhole(text: string, cut: boolean): { isJson: boolean; parsed: unknown } {
  if (cut) return { isJson: false, parsed: undefined };
  try {
    return { isJson: true, parsed: JSON.parse(text) as unknown };
  } catch {
    return { isJson: false, parsed: undefined };
  }
}

function Body({ entry }: { entry: Entry }) {
  const text = entry.request?.body;
  if (!text) return <p class="muted">No body.</p>;
  const cut = entry.request?.bodyChars !== undefined && entry.request.bodyChars > text.length;
  const { isJson, parsed } = parseWhole(text, cut);
  return (
    <>
      {cut && (
        <p class="muted">
          The first {text.length} of {entry.request!.bodyChars} characters (the journal keeps {KEPT_BODY}).
        </p>
      )}
      {isJson ? (
        <JsonView value={parsed} marks={marksOf(entry, parsed)} />
      ) : (
        <pre class="json" tabIndex={0} aria-label="Request body">
          {text}
        </pre>
      )}
    </>
  );
}

const NO_MARKS = new Map<string, Mark[]>();

/** What came back: JSON pretty-printed (as text when cut or not JSON); of a binary answer, its type and size. */
function ResponseBody({ entry: e }: { entry: Entry }) {
  if (e.responseBytes !== undefined) {
    return (
      <p class="muted">
        {e.responseHeaders?.['content-type'] ?? 'Binary'}, {e.responseBytes} bytes:{' '}
        <a href={bodyUrl(e.requestId)} target="_blank" rel="noopener noreferrer">
          the body
        </a>{' '}
        (while the server holds it: the most recent {HELD_BODIES} of bodies).
      </p>
    );
  }
  const text = e.responseBody;
  if (!text) return <p class="muted">No body recorded.</p>;
  const cut = e.responseBodyChars !== undefined && e.responseBodyChars > text.length;
  const { isJson, parsed } = parseWhole(text, cut);
  return (
    <>
      {cut && (
        <p class="muted">
          The first {text.length} of {e.responseBodyChars} characters (the journal keeps {KEPT_RESPONSE};{' '}
          <a href={bodyUrl(e.requestId)} target="_blank" rel="noopener noreferrer">
            the whole body
          </a>{' '}
          while the server holds it).
        </p>
      )}
      {isJson ? (
        <JsonView value={parsed} marks={NO_MARKS} label="Response body" />
      ) : (
        <pre class="json response-text" tabIndex={0} aria-label="Response body">
          {text}
        </pre>
      )}
    </>
  );
}

const ENDINGS: Record<string, string> = {
  completed: 'ended normally ([DONE])',
  cut: 'cut by a fault: the connection dropped without [DONE]',
  aborted: 'aborted by the client: it left before the end',
  stalled: 'stalled by a fault, then dropped',
  'timed-out': "ended at the server's stream time limit",
};

const ms = (n: number): string => (Math.round(n * 10) / 10).toFixed(1);

/** What an event's data says, in short: a chunk's text, role or finish reason. */
function gist(data: string): string {
  if (data === '[DONE]') return '[DONE]';
  try {
    const chunk = JSON.parse(data) as {
      choices?: { delta?: { role?: string; content?: string | null }; finish_reason?: string | null }[];
      error?: { message?: string };
    };
    if (chunk.error) return `error: ${chunk.error.message ?? ''}`;
    const c = chunk.choices?.[0];
    const parts: string[] = [];
    if (c?.delta?.role) parts.push(`role: ${c.delta.role}`);
    if (typeof c?.delta?.content === 'string') parts.push(JSON.stringify(c.delta.content));
    if (c?.finish_reason) parts.push(`finish: ${c.finish_reason}`);
    return parts.join(' · ');
  } catch {
    return '(not JSON)';
  }
}

/** A streamed answer's events as written, each with its offset from the response's head and from the event before. */
function StreamEvents({ entry: e }: { entry: Entry }) {
  const sse = e.sse;
  if (!sse) return null;
  let previous = 0;
  return (
    <>
      <h3>Stream events</h3>
      <p class="stream-ending">
        {sse.total} {sse.total === 1 ? 'event' : 'events'}; the stream {ENDINGS[e.stream ?? ''] ?? e.stream ?? 'ended'}.
        {sse.events.length < sse.total &&
          ` The first ${sse.events.length} are shown: the journal keeps only the start of a long stream.`}
      </p>
      <div class="events-wrap">
        <table class="events" aria-label="Stream events">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">at (ms)</th>
              <th scope="col">+ms</th>
              <th scope="col">data</th>
            </tr>
          </thead>
          <tbody>
            {sse.events.map((ev, i) => {
              const gap = ev.ms - previous;
              previous = ev.ms;
              return (
                <tr>
                  <td>{i + 1}</td>
                  <td class="at">{ms(ev.ms)}</td>
                  <td class="gap">+{ms(gap)}</td>
                  <td class="data">
                    <span class="gist">{gist(ev.data)}</span>
                    <code>{ev.data}</code>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** The images of an image answer: b64_json as data: URLs, URLs of this server as links to it. */
function imagesOf(text: string | undefined): { src?: string; link?: string }[] {
  if (!text) return [];
  let data: unknown;
  try {
    data = (JSON.parse(text) as { data?: unknown }).data;
  } catch {
    return [];
  }
  if (!Array.isArray(data)) return [];
  return data.slice(0, 10).map((item: { b64_json?: unknown; url?: unknown }) => {
    if (typeof item?.b64_json === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(item.b64_json))
      return { src: `data:image/png;base64,${item.b64_json}` };
    if (typeof item?.url === 'string') {
      try {
        const url = new URL(item.url, location.href);
        // Only this server's own media: the page may load nothing from anywhere else (its CSP says so too).
        return url.origin === location.origin ? { src: url.pathname + url.search } : { link: item.url };
      } catch {
        return {};
      }
    }
    return {};
  });
}

/** An image answer's images, read from the journal's body, or from the server when the journal holds only its start. */
function AnswerImages({ entry: e }: { entry: Entry }) {
  const whole = e.responseBody !== undefined && (e.responseBodyChars ?? 0) <= e.responseBody.length;
  const [text, setText] = useState<string | undefined>(whole ? e.responseBody : undefined);
  const [gone, setGone] = useState(false);
  useEffect(() => {
    setGone(false);
    if (whole) {
      setText(e.responseBody);
      return;
    }
    setText(undefined);
    let live = true;
    fullBody(e.requestId).then(
      (t) => {
        if (!live) return;
        setText(t);
        setGone(t === undefined);
      },
      () => live && setGone(true),
    );
    return () => {
      live = false;
    };
  }, [e.requestId, e.time]);
  if (gone) return <p class="muted">The images are no longer held by the server.</p>;
  const images = imagesOf(text);
  return (
    <div class="media-row">
      {images.map((img, i) =>
        img.src ? (
          <img class="media" src={img.src} alt={`Image ${i + 1} of the answer`} />
        ) : img.link ? (
          <p class="muted">
            Image {i + 1}: <span class="mono">{img.link}</span> (not on this server)
          </p>
        ) : null,
      )}
    </div>
  );
}

/** What an answer holds as media, shown as that media: images, speech, a video. */
function Media({ entry: e }: { entry: Entry }) {
  if (e.status !== 200) return null;
  const type = (e.responseHeaders?.['content-type'] ?? '').toLowerCase();
  if ((e.operation === 'images.generate' || e.operation === 'images.edit') && e.responseBody) {
    return (
      <>
        <h3>Media</h3>
        <AnswerImages entry={e} />
      </>
    );
  }
  if (e.responseBytes !== undefined && e.operation !== 'media.image' && e.operation !== 'media.video') {
    const src = bodyUrl(e.requestId);
    const kind = type.startsWith('audio/')
      ? 'audio'
      : type.startsWith('video/')
        ? 'video'
        : type.startsWith('image/')
          ? 'image'
          : undefined;
    if (!kind) return null;
    return (
      <>
        <h3>Media</h3>
        {kind === 'audio' && (
          <audio class="media" src={src} controls preload="metadata" aria-label="The speech of this answer" />
        )}
        {kind === 'video' && <video class="media" src={src} controls preload="metadata" />}
        {kind === 'image' && <img class="media" src={src} alt="The image of this answer" />}
      </>
    );
  }
  return <Download entry={e} />;
}

/** A media download (an image or video link the mock handed out) shown as the media itself, from this server. */
function Download({ entry: e }: { entry: Entry }) {
  if (e.method !== 'GET' || !e.path.startsWith('/') || e.path.endsWith('...')) return null;
  if (e.operation === 'media.image') {
    return (
      <>
        <h3>Media</h3>
        <img class="media" src={e.path} alt="The image this request downloaded" />
      </>
    );
  }
  if (e.operation === 'media.video') {
    return (
      <>
        <h3>Media</h3>
        <video class="media" src={e.path} controls preload="metadata" />
      </>
    );
  }
  return null;
}

function Fact({ k, v }: { k: string; v: string | number | undefined | null }) {
  if (v === undefined || v === null || v === '') return null;
  return (
    <>
      <dt>{k}</dt>
      <dd>{v}</dd>
    </>
  );
}

/** One request opened: the attempts of its chain, what was sent, what was wrong with it, what came back. */
export function Detail({ chain, onClose }: { chain: Chain; onClose: () => void }) {
  const [at, setAt] = useState(chain.attempts.length - 1);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => setAt(chain.attempts.length - 1), [chain.id, chain.attempts.length]);
  useEffect(() => heading.current?.focus(), [chain.id]);
  const e = chain.attempts[Math.min(at, chain.attempts.length - 1)]!;
  return (
    <section
      class="detail"
      aria-labelledby="detail-title"
      onKeyDown={(ev) => {
        if (ev.key === 'Escape') onClose();
      }}
    >
      <div class="detail-head">
        <button type="button" class="secondary back" onClick={onClose} aria-label="Close this request (Escape)">
          ← Back
        </button>
        <h2 id="detail-title" tabIndex={-1} ref={heading}>
          <span class={`status s-${tone(e.status)}`}>{e.status || '—'}</span> {e.method}{' '}
          <span class="mono">{e.path}</span>
        </h2>
      </div>
      {chain.attempts.length > 1 && (
        <div class="attempts" role="group" aria-label="Attempts of this call">
          {chain.attempts.map((a, i) => (
            <button
              type="button"
              class={i === at ? 'attempt current' : 'attempt'}
              aria-pressed={i === at}
              onClick={() => setAt(i)}
            >
              Attempt {i + 1}: <span class={`s-${tone(a.status)}`}>{a.status || 'no response'}</span>
            </button>
          ))}
        </div>
      )}
      <dl class="facts">
        <Fact k="Operation" v={e.operation} />
        <Fact k="Model" v={e.model} />
        <Fact k="Key" v={e.keyLabel} />
        <Fact k="Time" v={new Date(e.time).toISOString()} />
        <Fact k="Latency" v={`${e.latencyMs} ms`} />
        <Fact k="Request id" v={e.requestId} />
        <Fact k="Retry count" v={e.retryCount} />
        <Fact k="Fault" v={e.fault} />
        <Fact k="Stream" v={e.stream} />
        <Fact k="Error code" v={e.errorCode} />
        <Fact k="Retry hint" v={e.retryAfterMs === undefined ? undefined : `${e.retryAfterMs} ms`} />
      </dl>
      <Media entry={e} />
      {e.details?.length ? (
        <>
          <h3>Validation violations</h3>
          <ul class="violations">
            {e.details.map((d) => (
              <li>
                <code class="param">{d.param ?? '(body)'}</code> <span class="rule">{d.code}</span>{' '}
                <span>{d.message}</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <StreamEvents entry={e} />
      <h3>Request body</h3>
      <Body entry={e} />
      <h3>Request headers</h3>
      <Headers headers={e.request?.headers} label="Request headers" />
      {!e.sse && (
        <>
          <h3>Response body</h3>
          <ResponseBody entry={e} />
        </>
      )}
      <h3>Response headers</h3>
      <Headers headers={e.responseHeaders} label="Response headers" />
    </section>
  );
}
