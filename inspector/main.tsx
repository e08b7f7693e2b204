import { render } from 'preact';
import { useMemo, useRef, useState } from 'preact/hooks';
import type { Entry } from './api.js';
import { Detail } from './detail.js';
import { FaultsPanel } from './faults.js';
import { useJournal, type Feed } from './journal.js';
import { LatencyPanel } from './latency.js';
import { NO_FILTERS, chainMatches, chainsOf, tone, valuesOf, type Chain, type Filters } from './model.js';

const time = (ms: number): string => new Date(ms).toLocaleTimeString([], { hour12: false });

function Select({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: [string, string][];
  onChange: (v: string) => void;
}) {
  return (
    <label class="filter">
      <span>{label}</span>
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {options.map(([v, text]) => (
          <option value={v}>{text}</option>
        ))}
      </select>
    </label>
  );
}

function FilterBar({ entries, filters, set }: { entries: Entry[]; filters: Filters; set: (f: Filters) => void }) {
  const ops = valuesOf(entries, (e) => e.operation);
  const keys = valuesOf(entries, (e) => e.keyLabel);
  const statuses = valuesOf(entries, (e) => String(e.status));
  const all = (values: string[]): [string, string][] => values.map((v) => [v, v]);
  return (
    <div class="filters" role="group" aria-label="Filters">
      <label class="filter search">
        <span>Search</span>
        <input
          type="search"
          value={filters.text}
          placeholder="request id, model, key or a word of the body"
          onInput={(e) => set({ ...filters, text: (e.target as HTMLInputElement).value })}
        />
      </label>
      <Select
        label="Operation"
        value={filters.operation}
        options={[['', 'all'], ...all(ops)]}
        onChange={(operation) => set({ ...filters, operation })}
      />
      <Select
        label="Status"
        value={filters.status}
        options={[
          ['', 'all'],
          ['2xx', '2xx'],
          ['4xx', '4xx'],
          ['5xx', '5xx'],
          ['0', '0 (no response)'],
          ...all(statuses.filter((s) => s !== '0')),
        ]}
        onChange={(status) => set({ ...filters, status })}
      />
      <Select
        label="Key"
        value={filters.key}
        options={[['', 'all'], ...all(keys)]}
        onChange={(key) => set({ ...filters, key })}
      />
      <Select
        label="Fault"
        value={filters.fault}
        options={[
          ['', 'all'],
          ['any', 'with a fault'],
          ['none', 'without'],
          ['[header]', 'from a header'],
          ['[rule', 'from a rule'],
        ]}
        onChange={(fault) => set({ ...filters, fault })}
      />
      {(filters.operation || filters.status || filters.key || filters.fault || filters.text) && (
        <button type="button" class="link" onClick={() => set(NO_FILTERS)}>
          Clear filters
        </button>
      )}
    </div>
  );
}

function Row({ chain, selected, onOpen }: { chain: Chain; selected: boolean; onOpen: (c: Chain) => void }) {
  const last = chain.attempts[chain.attempts.length - 1]!;
  const first = chain.attempts[0]!;
  return (
    <li class={selected ? 'row selected' : 'row'}>
      <button
        type="button"
        class="row-button"
        data-chain={chain.id}
        aria-current={selected ? 'true' : undefined}
        onClick={() => onOpen(chain)}
      >
        <span class="c-time">{time(first.time)}</span>
        <span class={`status s-${tone(last.status)}`}>{last.status || '—'}</span>
        <span class="c-main">
          <span class="c-op">{last.operation ?? 'unknown route'}</span>
          <span class="c-path">
            {last.method} {last.path}
          </span>
        </span>
        <span class="c-tags">
          {chain.attempts.length > 1 && (
            <span class="tag tag-chain" title="Attempts of one call (x-stainless-retry-count)">
              {chain.attempts.length} attempts: {chain.attempts.map((a) => a.status || '0').join(' → ')}
            </span>
          )}
          {last.fault && <span class="tag tag-fault">{last.fault}</span>}
          {chain.attempts.some((a) => a.stream === 'aborted') && <span class="tag tag-aborted">aborted</span>}
          {last.stream && last.stream !== 'completed' && last.stream !== 'aborted' && (
            <span class="tag tag-fault">{last.stream}</span>
          )}
          {last.keyLabel && <span class="tag">{last.keyLabel}</span>}
        </span>
        <span class="c-latency">{Math.round(chain.attempts.reduce((s, a) => s + a.latencyMs, 0))} ms</span>
      </button>
    </li>
  );
}

type View = 'requests' | 'faults' | 'latency';
const TABS: readonly (readonly [View, string])[] = [
  ['requests', 'Requests '],
  ['faults', 'Faults & limits'],
  ['latency', 'Latency'],
];

const FEED_TEXT: Readonly<Record<Feed, string>> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
};

/**
 * While a mouse points at the list, the requests listed then are the only ones shown: a newer request would push
 * every row down, under the pointer, just as it is about to click one. The newer ones appear when the pointer
 * leaves; meanwhile the header counts them (`waiting`).
 */
function useHeldList(chains: Chain[], matching: Chain[]) {
  const [held, setHeld] = useState<ReadonlySet<string> | undefined>();
  const shown = useMemo(() => (held ? matching.filter((c) => held.has(c.id)) : matching), [matching, held]);
  const holdStill = (ev: PointerEvent) => {
    // A touch has no pointer resting on the list: its tap is over before anything could move.
    if (ev.pointerType !== 'touch') setHeld(new Set(chains.map((c) => c.id)));
  };
  return { shown, waiting: matching.length - shown.length, holdStill, release: () => setHeld(undefined) };
}

/** Arrow keys, Home and End move through the list's rows and open the one they reach. */
function moveInList(list: HTMLUListElement | null, ev: KeyboardEvent): void {
  if (ev.key !== 'ArrowDown' && ev.key !== 'ArrowUp' && ev.key !== 'Home' && ev.key !== 'End') return;
  const buttons = [...(list?.querySelectorAll<HTMLButtonElement>('.row-button') ?? [])];
  if (!buttons.length) return;
  ev.preventDefault();
  const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
  const to =
    ev.key === 'Home'
      ? 0
      : ev.key === 'End'
        ? buttons.length - 1
        : Math.max(0, Math.min(buttons.length - 1, at + (ev.key === 'ArrowDown' ? 1 : -1)));
  buttons[to]!.focus();
  buttons[to]!.click();
}

function App() {
  const [error, setError] = useState<string | undefined>();
  const { entries, feed, clear } = useJournal(setError);
  const [tab, setTab] = useState<View>('requests');
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [open, setOpen] = useState<string | undefined>();
  const chains = useMemo(() => chainsOf(entries), [entries]);
  const matching = useMemo(() => chains.filter((c) => chainMatches(c, filters)).reverse(), [chains, filters]);
  const list = useHeldList(chains, matching);
  const show = (view: View) => {
    list.release(); // the list goes away with no pointer leaving it
    setTab(view);
  };

  return (
    <div class={chains.some((c) => c.id === open) ? 'app has-detail' : 'app'}>
      <TopBar tab={tab} show={show} count={entries.length} feed={feed} waiting={list.waiting} />
      {error && (
        <p class="banner" role="alert">
          {error}{' '}
          <button type="button" class="link" onClick={() => setError(undefined)}>
            Dismiss
          </button>
        </p>
      )}
      {tab === 'requests' ? (
        <RequestsView
          entries={entries}
          chains={chains}
          list={list}
          filters={filters}
          setFilters={setFilters}
          open={open}
          setOpen={setOpen}
          onClear={() => clear(() => setOpen(undefined))}
        />
      ) : tab === 'faults' ? (
        <main id="panel-faults" aria-labelledby="tab-faults" class="faults">
          <FaultsPanel operations={valuesOf(entries, (e) => e.operation)} onError={setError} />
        </main>
      ) : (
        <main id="panel-latency" aria-labelledby="tab-latency" class="faults">
          <LatencyPanel onError={setError} />
        </main>
      )}
    </div>
  );
}

/** The title, the tabs (the requests' with its count) and the state of the live feed. */
function TopBar({
  tab,
  show,
  count,
  feed,
  waiting,
}: {
  tab: View;
  show: (view: View) => void;
  count: number;
  feed: Feed;
  waiting: number;
}) {
  return (
    <header class="top">
      <h1>
        Request inspector <span class="sub">unified-ai-mock</span>
      </h1>
      <nav class="tabs" role="tablist" aria-label="Views">
        {TABS.map(([view, label]) => (
          <button
            type="button"
            role="tab"
            id={`tab-${view}`}
            aria-selected={tab === view}
            aria-controls={`panel-${view}`}
            onClick={() => show(view)}
          >
            {label}
            {view === 'requests' && <span class="count">{count}</span>}
          </button>
        ))}
      </nav>
      <span class={feed === 'live' ? 'live on' : 'live'} role="status" aria-live="polite">
        {FEED_TEXT[feed]}
        {waiting > 0 && ` · ${waiting} new, listed when the pointer leaves the list`}
      </span>
    </header>
  );
}

/** The requests tab: the filters, the list (newest first) and the opened request's detail. */
function RequestsView({
  entries,
  chains,
  list,
  filters,
  setFilters,
  open,
  setOpen,
  onClear,
}: {
  entries: Entry[];
  chains: Chain[];
  list: ReturnType<typeof useHeldList>;
  filters: Filters;
  setFilters: (f: Filters) => void;
  open: string | undefined;
  setOpen: (id: string | undefined) => void;
  onClear: () => void;
}) {
  const listRef = useRef<HTMLUListElement>(null);
  const opened = chains.find((c) => c.id === open);
  // Closing the detail gives the focus back to the row it was opened from.
  const close = () => {
    const id = open;
    setOpen(undefined);
    requestAnimationFrame(() =>
      listRef.current?.querySelector<HTMLButtonElement>(`[data-chain="${CSS.escape(id ?? '')}"]`)?.focus(),
    );
  };
  return (
    <main id="panel-requests" aria-labelledby="tab-requests" class="requests">
      <section class="list-pane" aria-label="Requests">
        <div class="toolbar">
          <FilterBar entries={entries} filters={filters} set={setFilters} />
          <button type="button" class="secondary" onClick={onClear}>
            Clear journal
          </button>
        </div>
        {list.shown.length ? (
          <ul
            class="rows"
            ref={listRef}
            onKeyDown={(ev) => moveInList(listRef.current, ev)}
            onPointerEnter={list.holdStill}
            onPointerLeave={list.release}
            aria-label="Requests, newest first (arrow keys move)"
          >
            {list.shown.map((c) => (
              <Row key={c.id} chain={c} selected={c.id === open} onOpen={(chain) => setOpen(chain.id)} />
            ))}
          </ul>
        ) : (
          <p class="empty">
            {entries.length
              ? 'No request matches the filters.'
              : 'No requests yet. Send one to this server and it appears here at once.'}
          </p>
        )}
      </section>
      {opened && <Detail chain={opened} onClose={close} />}
    </main>
  );
}

render(<App />, document.getElementById('app')!);
