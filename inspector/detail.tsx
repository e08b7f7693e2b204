import { useEffect, useRef, useState } from 'preact/hooks';
import type { Entry } from './api.js';
import { JsonView, type Mark } from './json.js';
import { paramPath, pathKey, tone, type Chain } from './model.js';

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

function Body({ entry }: { entry: Entry }) {
  const text = entry.request?.body;
  if (!text) return <p class="muted">No body.</p>;
  const cut = entry.request?.bodyChars !== undefined && entry.request.bodyChars > text.length;
  let parsed: unknown;
  let isJson = !cut;
  try {
    parsed = isJson ? JSON.parse(text) : undefined;
  } catch {
    isJson = false;
  }
  return (
    <>
      {cut && (
        <p class="muted">
          The first {text.length} of {entry.request!.bodyChars} characters (the journal keeps 8 KiB).
        </p>
      )}
      {isJson ? (
        <JsonView value={parsed} marks={marksOf(entry, parsed)} />
      ) : (
        <pre class="json" tabIndex={0}>
          {text}
        </pre>
      )}
    </>
  );
}

/** A media download (an image or video link the mock handed out) shown as the media itself, from this server. */
function Media({ entry: e }: { entry: Entry }) {
  if (e.method !== 'GET' || e.status !== 200 || !e.path.startsWith('/') || e.path.endsWith('...')) return null;
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
          <span class={`status s-${tone(e.status)}`}>{e.status || '—'}</span> {e.method} <span class="mono">{e.path}</span>
        </h2>
      </div>
      {chain.attempts.length > 1 && (
        <div class="attempts" role="group" aria-label="Attempts of this call">
          {chain.attempts.map((a, i) => (
            <button type="button" class={i === at ? 'attempt current' : 'attempt'} aria-pressed={i === at} onClick={() => setAt(i)}>
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
                <code class="param">{d.param ?? '(body)'}</code> <span class="rule">{d.code}</span> <span>{d.message}</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <h3>Request body</h3>
      <Body entry={e} />
      <h3>Request headers</h3>
      <Headers headers={e.request?.headers} label="Request headers" />
      <h3>Response headers</h3>
      <Headers headers={e.responseHeaders} label="Response headers" />
    </section>
  );
}
