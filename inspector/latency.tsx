import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import type { DistSummary, LatencyView } from '../src/domain/latency/types.js';

const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(v >= 10_000 ? 0 : 1)} s` : `${Math.round(v)} ms`);
const figures = (s: DistSummary | undefined): string => (s ? `${ms(s.mean)} · ${ms(s.p99)}` : '—');

const Options = ({ names }: { names: readonly string[] }) => (
  <>
    {names.map((n) => (
      <option value={n}>{n}</option>
    ))}
  </>
);

/**
 * The latency profiles in force (docs/load-testing.md): the one for every model, each model's own with this
 * instance's running and waiting requests, and each profile's figures. A change is a PUT /__admin/latency, as a
 * load test's script would make it mid-run; it applies from the next request.
 */
export function LatencyPanel({ onError }: { onError: (message: string) => void }) {
  const [view, setView] = useState<LatencyView | undefined>();
  const [status, setStatus] = useState('');

  const load = () => api.latency().then(setView, (err: Error) => onError(err.message));
  useEffect(() => {
    void load();
    const timer = setInterval(load, 2000);
    return () => clearInterval(timer);
  }, []);

  const change = (body: Record<string, unknown>, said: string) =>
    api.setLatency(body).then(
      (v) => {
        setView(v);
        setStatus(said);
      },
      (err: Error) => setStatus(`Not changed: ${err.message}`),
    );
  const reset = () =>
    api.resetLatency().then(
      (v) => {
        setView(v);
        setStatus('Back to the configuration: profiles and seed as the server started.');
      },
      (err: Error) => onError(err.message),
    );

  if (!view) return <p class="empty">Loading the latency settings…</p>;
  const names = Object.keys(view.profiles);
  return (
    <div class="faults-grid">
      <section aria-labelledby="latency-title" class="card">
        <h2 id="latency-title">Latency</h2>
        <p class="muted">
          A profile gives a model a time to first token, a gap between tokens, a media duration and a cap on concurrent
          requests. The next request uses a change; a request's <code>X-Mock-Pacing: profile=NAME</code> wins over both.
        </p>
        <div class="row-fields">
          <label class="filter">
            <span>Every model</span>
            <select
              value={view.profile}
              onChange={(e) => {
                const profile = (e.target as HTMLSelectElement).value;
                void change({ profile }, `Every model now answers with ${profile}.`);
              }}
            >
              <option value="off">off (answers at once)</option>
              <option value="catalogue">catalogue (each model its own)</option>
              <Options names={names} />
            </select>
          </label>
          <p class="muted">
            Seed {view.seed}, {view.draws} requests drawn. A full queue answers {view.queueFullStatus}, retry after{' '}
            {ms(view.retryAfterMs)}.
          </p>
        </div>
        <button type="button" class="secondary" onClick={reset}>
          Back to the configuration
        </button>
        <p class="form-status" role="status" aria-live="polite">
          {status}
        </p>
      </section>
      <section aria-labelledby="models-title" class="card">
        <h2 id="models-title">Models</h2>
        <table class="grid" aria-label="Latency per model">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Profile</th>
              <th scope="col">Set by</th>
              <th scope="col">Running / waiting</th>
            </tr>
          </thead>
          <tbody>
            {view.models.map((m) => (
              <tr key={m.model}>
                <td>
                  {m.model} <span class="muted">{m.kind}</span>
                </td>
                <td>
                  <select
                    aria-label={`Profile of ${m.model}`}
                    value={m.profile ?? 'off'}
                    onChange={(e) => {
                      const profile = (e.target as HTMLSelectElement).value;
                      void change({ models: { [m.model]: profile } }, `${m.model} now answers with ${profile}.`);
                    }}
                  >
                    <option value="off">off</option>
                    <Options names={names} />
                  </select>
                </td>
                <td>{m.from ?? '—'}</td>
                <td>
                  {m.running ?? 0} / {m.waiting ?? 0}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="profiles-title" class="card">
        <h2 id="profiles-title">Profiles</h2>
        <table class="grid" aria-label="Latency profiles">
          <thead>
            <tr>
              <th scope="col">Profile</th>
              <th scope="col">First token (mean · p99)</th>
              <th scope="col">Between tokens (mean · p99)</th>
              <th scope="col">Media (mean · p99)</th>
              <th scope="col">Running / waiting at most</th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => {
              const p = view.profiles[n]!;
              return (
                <tr key={n}>
                  <td>
                    {n} {p.description && <span class="muted">{p.description}</span>}
                  </td>
                  <td>{figures(p.summary.ttft)}</td>
                  <td>{figures(p.summary.interToken)}</td>
                  <td>{figures(p.summary.duration)}</td>
                  <td>
                    {p.maxRunning ?? '∞'} / {p.maxRunning === undefined ? '—' : (p.maxWaiting ?? 0)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </section>
    </div>
  );
}
