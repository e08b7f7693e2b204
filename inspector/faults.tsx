import { useEffect, useState } from 'preact/hooks';
import { FAULT_KINDS, type FaultPreset } from '../src/domain/faults/kinds.js';
import { api, type KeyLimits, type Rule } from './api.js';

interface Preset {
  readonly name: string;
  readonly make: (operation: string, n: number) => Record<string, unknown>;
}

const scope = (op: string) => (op ? { match: { operation: op } } : {});

// Each preset is an ordinary rule body for POST /__admin/faults (docs/faults.md#fault-rules), read from the row of
// the fault kind it shows (src/domain/faults/kinds.ts).
const PRESETS: Preset[] = FAULT_KINDS.flatMap((kind): readonly FaultPreset[] =>
  'presets' in kind ? kind.presets : [],
).map((p) => ({
  name: p.name,
  make: (op, n) => ({
    id: p.id,
    ...(p.streams ? { match: { operation: op || 'chat.completions', body: { stream: true } } } : scope(op)),
    fault: p.fault(n),
    ...(p.times ? { times: p.times(n) } : {}),
  }),
}));

const OPERATIONS = [
  'chat.completions',
  'images.generate',
  'images.edit',
  'video.generate',
  'voice.tts',
  'cloud.speech',
  'me',
  'models.list',
  'video.get',
  'media.image',
  'media.video',
];

const summary = (value: unknown): string => (value === undefined ? '' : JSON.stringify(value));
const left = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms} ms`);

type OnError = (message: string) => void;

/** The server's fault rules and each key's rate-limit window, read again every 2 s. */
function useRulesAndLimits(onError: OnError) {
  const [rules, setRules] = useState<Rule[]>([]);
  const [limits, setLimits] = useState<KeyLimits[]>([]);
  const load = () =>
    Promise.all([api.rules(), api.limits()]).then(
      ([r, l]) => {
        setRules(r.data);
        setLimits(l.data);
      },
      (err: Error) => onError(err.message),
    );
  useEffect(() => {
    void load();
    const timer = setInterval(load, 2000);
    return () => clearInterval(timer);
  }, []);
  return { rules, limits, load };
}

/** Fault rules (list, add from a preset or as JSON, remove and enable again) and each key's rate-limit window. */
export function FaultsPanel({ operations, onError }: { operations: string[]; onError: OnError }) {
  const { rules, limits, load } = useRulesAndLimits(onError);
  // Removed on this page: kept here (not on the server) so that one click adds the same rule back.
  const [removed, setRemoved] = useState<Rule[]>([]);
  const [status, setStatus] = useState('');

  const add = (body: unknown) =>
    api.addRule(body).then(
      (rule) => {
        setStatus(`Added rule ${rule.id}.`);
        setRemoved((r) => r.filter((x) => x.id !== rule.id));
        return load();
      },
      (err: Error) => setStatus(`Not added: ${err.message}`),
    );
  const remove = (rule: Rule) =>
    api.deleteRule(rule.id).then(
      () => {
        setRemoved((r) => [...r.filter((x) => x.id !== rule.id), rule]);
        setStatus(`Removed rule ${rule.id}.`);
        return load();
      },
      (err: Error) => onError(err.message),
    );
  const enable = (rule: Rule) => {
    const { state: _state, ...body } = rule;
    void add(body);
  };
  const reset = () =>
    api.reset().then(
      () => {
        setStatus('Every key has its full allowance again, and every rule its first state.');
        return load();
      },
      (err: Error) => onError(err.message),
    );

  return (
    <div class="faults-grid">
      <RulesCard rules={rules} removed={removed} onRemove={remove} onEnable={enable} />
      <RuleForm operations={operations} status={status} onAdd={add} onNotJson={setStatus} />
      <LimitsCard limits={limits} onReset={reset} />
    </div>
  );
}

/** The rules in the order they are tried, with their counters, and those removed on this page. */
function RulesCard({
  rules,
  removed,
  onRemove,
  onEnable,
}: {
  rules: Rule[];
  removed: Rule[];
  onRemove: (rule: Rule) => void;
  onEnable: (rule: Rule) => void;
}) {
  return (
    <section aria-labelledby="rules-title" class="card">
      <h2 id="rules-title">Fault rules</h2>
      <p class="muted">
        Tried in order; the first that matches faults the request. Header faults (X-Mock-Fault) win over rules.
      </p>
      {rules.length ? (
        <table class="grid" aria-label="Fault rules">
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Match</th>
              <th scope="col">Fault</th>
              <th scope="col">Matched / fired / left</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rules.map((r) => (
              <tr key={r.id}>
                <td class="mono">{r.id}</td>
                <td class="mono">{summary(r.match) || 'every request'}</td>
                <td class="mono">{summary(r.fault)}</td>
                <td>
                  {r.state?.matched ?? 0} / {r.state?.fired ?? 0} / {r.state?.remaining ?? '∞'}
                </td>
                <td>
                  <button type="button" class="danger" onClick={() => onRemove(r)} aria-label={`Remove rule ${r.id}`}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="empty">No fault rules: every request is answered normally.</p>
      )}
      {removed.length > 0 && <RemovedList removed={removed} onEnable={onEnable} />}
    </section>
  );
}

function RemovedList({ removed, onEnable }: { removed: Rule[]; onEnable: (rule: Rule) => void }) {
  return (
    <>
      <h3>Removed on this page</h3>
      <ul class="removed">
        {removed.map((r) => (
          <li key={r.id}>
            <span class="mono">{r.id}</span> <span class="mono muted">{summary(r.fault)}</span>{' '}
            <button
              type="button"
              class="secondary"
              onClick={() => onEnable(r)}
              aria-label={`Enable rule ${r.id} again`}
            >
              Enable
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}

/** A rule to add: a preset filled in for an operation and a number, editable as JSON before it is posted. */
function RuleForm({
  operations,
  status,
  onAdd,
  onNotJson,
}: {
  operations: string[];
  status: string;
  onAdd: (body: unknown) => void;
  onNotJson: (message: string) => void;
}) {
  const [preset, setPreset] = useState(0);
  const [operation, setOperation] = useState('chat.completions');
  const [n, setN] = useState(3);
  const [draft, setDraft] = useState('');
  useEffect(() => setDraft(JSON.stringify(PRESETS[preset]!.make(operation, n), null, 2)), [preset, operation, n]);

  const submit = (ev: Event) => {
    ev.preventDefault();
    let body: unknown;
    try {
      body = JSON.parse(draft);
    } catch {
      onNotJson('Not added: the rule is not valid JSON.');
      return;
    }
    onAdd(body);
  };
  const ops = [...new Set([...OPERATIONS, ...operations])];
  return (
    <section aria-labelledby="add-title" class="card">
      <h2 id="add-title">Add a rule</h2>
      <form onSubmit={submit}>
        <div class="presets" role="radiogroup" aria-label="Preset">
          {PRESETS.map((p, i) => (
            <button
              type="button"
              role="radio"
              aria-checked={i === preset}
              class={i === preset ? 'chip on' : 'chip'}
              onClick={() => setPreset(i)}
            >
              {p.name}
            </button>
          ))}
        </div>
        <div class="row-fields">
          <label class="filter">
            <span>Operation</span>
            <select value={operation} onChange={(e) => setOperation((e.target as HTMLSelectElement).value)}>
              <option value="">every operation</option>
              {ops.map((op) => (
                <option value={op}>{op}</option>
              ))}
            </select>
          </label>
          <label class="filter">
            <span>N (times, seconds or events)</span>
            <input
              type="number"
              min={1}
              max={100}
              value={n}
              onInput={(e) => setN(Math.max(1, Number((e.target as HTMLInputElement).value) || 1))}
            />
          </label>
        </div>
        <label class="block">
          <span>Rule (JSON, as POST /__admin/faults takes it)</span>
          <textarea
            rows={9}
            spellcheck={false}
            value={draft}
            onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
          />
        </label>
        <button type="submit" class="primary">
          Add rule
        </button>
        <p class="form-status" role="status" aria-live="polite">
          {status}
        </p>
      </form>
    </section>
  );
}

/** Each key's rate-limit window, and the button that gives every key its allowance back. */
function LimitsCard({ limits, onReset }: { limits: KeyLimits[]; onReset: () => void }) {
  return (
    <section aria-labelledby="limits-title" class="card">
      <h2 id="limits-title">Rate limits</h2>
      {limits.length ? (
        <table class="grid" aria-label="Rate limits">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Requests left</th>
              <th scope="col">Tokens left</th>
              <th scope="col">Window resets in</th>
            </tr>
          </thead>
          <tbody>
            {limits.map((k) => (
              <tr key={k.key}>
                <td>
                  {k.name ?? '—'} <span class="mono muted">{k.key}</span>
                </td>
                <td>
                  {k.requests.remaining} / {k.requests.limit}
                </td>
                <td>{k.tokens ? `${k.tokens.remaining} / ${k.tokens.limit}` : '—'}</td>
                <td>{left(k.requests.resetMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="empty">No key has a rate limit.</p>
      )}
      <button type="button" class="danger" onClick={onReset}>
        Reset all limits and rule counters
      </button>
    </section>
  );
}
