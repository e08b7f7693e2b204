import type { ComponentChildren } from 'preact';
import { pathKey } from './model.js';

/** A validation violation to show on the field it names. */
export interface Mark {
  readonly code: string;
  readonly message: string;
}

interface Props {
  value: unknown;
  marks: ReadonlyMap<string, Mark[]>;
  label?: string;
}

// Everything below is text nodes and elements built by Preact: a body that holds markup is shown as
// text, never parsed as HTML.
function scalar(value: unknown): ComponentChildren {
  if (typeof value === 'string') return <span class="j-str">{JSON.stringify(value)}</span>;
  if (typeof value === 'number') return <span class="j-num">{String(value)}</span>;
  if (typeof value === 'boolean' || value === null) return <span class="j-lit">{String(value)}</span>;
  return <span class="j-lit">{JSON.stringify(value)}</span>;
}

function MarkNote({ marks }: { marks: Mark[] }) {
  return (
    <span class="j-marks">
      {marks.map((m) => (
        <span class="j-mark" role="note">
          ⚠ {m.code}: {m.message}
        </span>
      ))}
    </span>
  );
}

function Node({
  value,
  path,
  marks,
  indent,
  label,
  last,
}: {
  value: unknown;
  path: (string | number)[];
  marks: ReadonlyMap<string, Mark[]>;
  indent: number;
  label?: string;
  last: boolean;
}) {
  const here = marks.get(pathKey(path));
  const pad = '  '.repeat(indent);
  const head = label === undefined ? null : <span class="j-key">{JSON.stringify(label)}</span>;
  const cls = here ? 'j-line j-flagged' : 'j-line';
  const comma = last ? '' : ',';
  // A value's line: its indent, its key, what it shows, and the note of a violation on this field.
  const line = (content: ComponentChildren) => (
    <div class={cls} data-path={pathKey(path)}>
      {pad}
      {head}
      {head && ': '}
      {content}
      {here && <MarkNote marks={here} />}
    </div>
  );
  if (value && typeof value === 'object') {
    const isArray = Array.isArray(value);
    const items: [string | number, unknown][] = isArray
      ? (value as unknown[]).map((v, i) => [i, v])
      : Object.entries(value as object);
    const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
    if (!items.length) {
      return line(
        <>
          {open}
          {close}
          {comma}
        </>,
      );
    }
    return (
      <>
        {line(open)}
        {items.map(([k, v], i) => (
          <Node
            value={v}
            path={[...path, k]}
            marks={marks}
            indent={indent + 1}
            label={isArray ? undefined : String(k)}
            last={i === items.length - 1}
          />
        ))}
        <div class="j-line">
          {pad}
          {close}
          {comma}
        </div>
      </>
    );
  }
  return line(
    <>
      {scalar(value)}
      {comma}
    </>,
  );
}

/** Pretty JSON, one line per value, with each violation shown on the line of its field. */
export function JsonView({ value, marks, label = 'Request body' }: Props) {
  return (
    <pre class="json" tabIndex={0} aria-label={label}>
      <Node value={value} path={[]} marks={marks} indent={0} last />
    </pre>
  );
}
