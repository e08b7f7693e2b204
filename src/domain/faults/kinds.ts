// The kinds of fault the mock injects, one row each. A kind's spelling in X-Mock-Fault, its grammar, what it
// cannot be combined with, what it does, its OpenAPI words and the inspector's presets are read from its row;
// its bounds are in fixtures/limits.json (`faults.bounds`, by the row's `field`). Adding a kind: its row here,
// its behaviour where its act is carried out, its test (docs/architecture.md, "Adding a fault kind").
// Imports nothing: the inspector's bundle reads this table too.

/** The least and the most a value may be (`$defs/range` of schemas/limits.json). */
export interface Range {
  readonly minimum: number;
  readonly maximum: number;
}

/** How a directive's value is written in X-Mock-Fault. */
type Grammar = 'flag' | 'status' | 'seconds' | 'count';

/**
 * What a kind does to a request. Before the handler: `wait` (pipeline/faults.ts), `drop` (no answer at all,
 * pipeline/transport.ts), `answer` (an error status instead of the operation's answer, with what `advise`
 * kinds add to it: faults/apply.ts), `header` (a header on whatever answer goes out). After it: `end` (the
 * body or stream ends early, by bytes or events: pipeline/transport.ts for a body, pipeline/sse.ts for the
 * mock's stream, relay/streamFault.ts for a relayed one) and `break` (a broken body or event: faults/apply.ts,
 * relay/streamFault.ts).
 */
export type FaultAct =
  | { readonly does: 'wait' }
  | { readonly does: 'drop'; readonly how: 'reset' | 'empty' }
  | { readonly does: 'answer' }
  | { readonly does: 'advise' }
  | { readonly does: 'header'; readonly name: string; readonly value: string }
  | { readonly does: 'end'; readonly how: 'cut' | 'stall' }
  | { readonly does: 'break' };

/** A ready-made rule of the inspector's "Add a rule" form; `n` is the form's number. */
export interface FaultPreset {
  readonly name: string;
  readonly id: string;
  readonly fault: (n: number) => Readonly<Record<string, number | true>>;
  /** How many requests it faults; every matching one when absent. */
  readonly times?: (n: number) => number;
  /** Only streamed requests match it (`body.stream: true`), chat completions unless an operation is chosen. */
  readonly streams?: true;
}

/** One kind of fault. */
export interface FaultKind {
  /** Its name in the config form (faultRules, POST /__admin/faults) and in schemas/fault-rule.json. */
  readonly field: string;
  /** Its name in X-Mock-Fault, the journal's fault text and the metrics' `fault` label. */
  readonly header: string;
  readonly grammar: Grammar;
  /** How X-Mock-Fault's usage line writes it. */
  readonly usage: string;
  /** Its words in the OpenAPI description of X-Mock-Fault, given its bounds, when more than its usage. */
  readonly prose?: (bounds: Range | undefined) => string;
  readonly act: FaultAct;
  /** Kinds it cannot be combined with (each pair is written on one of its two rows). */
  readonly excludes?: readonly string[];
  /** A kind it is meaningless without, and an example of the two together. */
  readonly needs?: { readonly field: string; readonly example: string };
  /** Also held to the server's stall maximum (timeouts.stallMaxMs). */
  readonly serverMax?: true;
  readonly presets?: readonly FaultPreset[];
}

/** Every kind, in the order the header form describes a fault. */
export const FAULT_KINDS = [
  {
    field: 'status',
    header: 'status',
    grammar: 'status',
    usage: 'status=NNN',
    prose: (b) => `\`status=NNN\` (${b?.minimum}-${b?.maximum})`,
    act: { does: 'answer' },
    excludes: ['malformed', 'streamCut', 'stall'],
    presets: [
      { name: '429 storm', id: '429-storm', fault: () => ({ status: 429, retryAfter: 0.2 }), times: (n) => n },
      { name: 'One 500', id: 'one-500', fault: () => ({ status: 500 }), times: () => 1 },
    ],
  },
  {
    field: 'retryAfter',
    header: 'retry-after',
    grammar: 'seconds',
    usage: 'retry-after=SECONDS',
    prose: () => '`retry-after=SECONDS` (up to 3 decimals, needs status)',
    act: { does: 'advise' },
    needs: { field: 'status', example: 'status=503;retry-after=2' },
  },
  {
    field: 'delayMs',
    header: 'delay',
    grammar: 'count',
    usage: 'delay=MS',
    act: { does: 'wait' },
    serverMax: true,
    presets: [{ name: 'Slow first token', id: 'slow-first-token', fault: (n) => ({ delayMs: n * 1000 }) }],
  },
  {
    field: 'reset',
    header: 'reset',
    grammar: 'flag',
    usage: 'reset',
    act: { does: 'drop', how: 'reset' },
    excludes: ['empty', 'status', 'malformed', 'streamCut', 'stall', 'noRetry', 'retryAfter'],
  },
  {
    field: 'empty',
    header: 'empty',
    grammar: 'flag',
    usage: 'empty',
    act: { does: 'drop', how: 'empty' },
    excludes: ['status', 'malformed', 'streamCut', 'stall', 'noRetry', 'retryAfter'],
  },
  { field: 'malformed', header: 'malformed', grammar: 'flag', usage: 'malformed', act: { does: 'break' } },
  {
    field: 'streamCut',
    header: 'stream-cut',
    grammar: 'count',
    usage: 'stream-cut=N',
    act: { does: 'end', how: 'cut' },
    excludes: ['stall'],
    presets: [{ name: 'Cut stream after N events', id: 'cut-stream', fault: (n) => ({ streamCut: n }), streams: true }],
  },
  {
    field: 'stall',
    header: 'stall',
    grammar: 'count',
    usage: 'stall=N',
    act: { does: 'end', how: 'stall' },
  },
  {
    field: 'noRetry',
    header: 'no-retry',
    grammar: 'flag',
    usage: 'no-retry',
    act: { does: 'header', name: 'x-should-retry', value: 'false' },
  },
] as const satisfies readonly FaultKind[];

type Row = (typeof FAULT_KINDS)[number];

/** A config-form field name. */
export type FaultField = Row['field'];

/**
 * One fault, in the form both the X-Mock-Fault header and config rules reduce to: a field per kind, `true` for
 * a kind that takes no value.
 */
export type FaultSpec = {
  -readonly [R in Row as R['field']]?: R['grammar'] extends 'flag' ? true : number;
};

/** The bounds of the kinds that take a number, by field (fixtures/limits.json, `faults.bounds`). */
export type FaultBounds = Readonly<Record<Extract<Row, { grammar: 'status' | 'seconds' | 'count' }>['field'], Range>>;

/** The row of a kind by its header-form name (any case handled by the caller). */
export const kindByHeader: ReadonlyMap<string, Row> = new Map(FAULT_KINDS.map((k) => [k.header, k]));

/** The header-form name of a config-form field. */
export const headerName = (field: string): string => FAULT_KINDS.find((k) => k.field === field)?.header ?? field;

/** The bounds of a kind that takes a number; undefined for a flag. */
export const boundsOf = (kind: FaultKind, bounds: FaultBounds): Range | undefined =>
  kind.grammar === 'flag' ? undefined : bounds[kind.field as keyof FaultBounds];

/** The kinds a fault sets, in the table's order. */
export const kindsOf = (spec: FaultSpec): Row[] =>
  FAULT_KINDS.filter((k) => (spec as Record<string, unknown>)[k.field] !== undefined);

/** How the fault drops the connection (sending nothing), if it does. */
export function dropOf(spec: FaultSpec): 'reset' | 'empty' | undefined {
  for (const k of kindsOf(spec)) if (k.act.does === 'drop') return k.act.how;
  return undefined;
}

/** How the fault ends an answer early, and after how many events (a stream) or bytes (a body), if it does. */
export function endingOf(spec: FaultSpec): { readonly how: 'cut' | 'stall'; readonly after: number } | undefined {
  for (const k of kindsOf(spec))
    if (k.act.does === 'end') return { how: k.act.how, after: (spec as Record<string, number>)[k.field]! };
  return undefined;
}

/** True when the fault breaks the answer's body (or one event of a stream). */
export const breaks = (spec: FaultSpec): boolean => kindsOf(spec).some((k) => k.act.does === 'break');

/** The headers the fault adds to whatever answer goes out. */
export const addedHeaders = (spec: FaultSpec): [string, string][] =>
  kindsOf(spec).flatMap((k) => (k.act.does === 'header' ? [[k.act.name, k.act.value] as [string, string]] : []));

/** A kind's words in the OpenAPI description of X-Mock-Fault. */
export const proseOf = (kind: FaultKind, bounds: FaultBounds): string =>
  kind.prose ? kind.prose(boundsOf(kind, bounds)) : `\`${kind.usage}\``;

/** The grammar of X-Mock-Fault, as its 400s name it. */
export const FAULT_USAGE = `${FAULT_KINDS.map((k) => k.usage).join(', ')}, separated by ";"`;
