// The gateway profile's cases, as data: each case names the probes it is judged on (requests the runner sends through
// the gateway, with the fault the upstream answers them with) and the judge that reads both ends. A probe is sent once
// however many cases read it.
import { operation } from '../../contract/operations.js';
import { zeroCost } from '../../verdict/cost.js';
import type { Case, CheckName, Level } from '../../verdict/types.js';
import type { OperationBase, SuiteValues } from '../conformance/suite.js';

/**
 * Where each operation's prompt text is, as a fault rule's dotted body path: the runner marks a request with a token
 * there, the one part of a request every gateway forwards as it is. The last message of a chat, so that a system
 * prompt a gateway puts first does not hide it.
 */
export const TEXT_FIELDS: Readonly<Record<string, string>> = {
  'chat.completions': 'messages.-1.content',
  'images.generate': 'prompt',
  'images.edit': 'prompt',
  'video.generate': 'prompt',
  'voice.tts': 'text',
  'cloud.speech': 'text',
};

/** A fault of the upstream, in the config form of a fault rule (docs/faults.md). */
export interface UpstreamFault {
  readonly status?: number;
  readonly retryAfter?: number;
  readonly malformed?: true;
  readonly streamCut?: number;
  readonly stall?: number;
  readonly delayMs?: number;
}

/**
 * When a probe runs: `parallel`, with --concurrency others; `streams`, one stream at a time, so nothing else on the
 * client delays its reads; `gap` and `paced`, alone, with the upstream's streams paced (a long gap, or short steady
 * ones); `hang`, last, its requests together, each waiting up to the gateway's timeout.
 */
export type Phase = 'parallel' | 'streams' | 'gap' | 'paced' | 'hang';

/** One request of a probe: its body (its text marked with the token) and how the upstream answers it. */
export interface ProbeRequest {
  readonly operation: string;
  readonly token: string;
  /** The marked text: the fault rule matches the request whose TEXT_FIELDS field equals it. */
  readonly text: string;
  readonly body: Readonly<Record<string, unknown>>;
  readonly streamed: boolean;
  readonly fault?: UpstreamFault;
  /** The fault applies to the first N attempts only, then the upstream answers. */
  readonly times?: number;
  /** The upstream may leave the gateway hanging: the runner waits the gateway's timeout and its grace, not --timeout
   * (a delay in its fault is set past that wait). */
  readonly hangs?: boolean;
}

export interface Probe {
  readonly key: string;
  readonly phase: Phase;
  readonly requests: readonly ProbeRequest[];
}

/** How a case is judged (src/tools/gateway/judge.ts has one function per name). */
export type JudgeName =
  | 'forward'
  | 'answer'
  | 'out-of-range'
  | 'error-status'
  | 'malformed'
  | 'retry-after'
  | 'envelope'
  | 'events'
  | 'first-event'
  | 'pacing'
  | 'cut'
  | 'isolation'
  | 'timeout'
  | 'retries-retry-after'
  | 'retries-backoff'
  | 'secret';

/** A case of the gateway profile: the case as every reporter sees it, its probes and its judge. */
export interface GatewayCase {
  readonly case: Case;
  readonly probes: readonly string[];
  readonly judge: JudgeName;
  /** error-status: the client statuses the upstream's fault may become (500 stands for any 5xx). */
  readonly accept?: readonly number[];
  /** out-of-range: the field sent outside its range. */
  readonly field?: string;
}

/** Upstream errors relayed, by the case id's last segment: the fault, the statuses the client may see, the rule. */
const ERRORS: readonly {
  readonly name: string;
  readonly fault: UpstreamFault;
  readonly accept: readonly number[];
  readonly level: Level;
  readonly description: string;
  readonly rule: string;
}[] = [
  {
    name: '400',
    fault: { status: 400 },
    accept: [400],
    level: 'must',
    description: "the upstream's 400 reaches the client as 400",
    rule: 'Errors: 400 is a bad request, "Correct the request"; a 5xx would have the client retry a request that cannot succeed',
  },
  {
    name: '401',
    fault: { status: 401 },
    accept: [401, 500],
    level: 'must',
    description:
      "the upstream's 401 (the gateway's own key refused) reaches the client as 401 or a 5xx, never a success",
    rule: "Errors: 401 is an invalid API key; the key refused is the gateway's, so a 401 or a server error (5xx) is the client's answer",
  },
  {
    name: '429',
    fault: { status: 429, retryAfter: 1 },
    accept: [429],
    level: 'must',
    description: "the upstream's 429 reaches the client as 429",
    rule: 'Errors and Limits: a request over the rate limit receives 429, "Slow down"; a 5xx would have the client retry at once',
  },
  {
    name: '500',
    fault: { status: 500 },
    accept: [500],
    level: 'must',
    description: "the upstream's 500 reaches the client as a 5xx",
    rule: 'Errors: 500 is a server error, "Retry with backoff"; a 4xx would blame the request, a 2xx would hide the failure',
  },
  {
    name: '503',
    fault: { status: 503, retryAfter: 1 },
    accept: [500, 429],
    level: 'must',
    description: "the upstream's 503 (overloaded, with retry-after) reaches the client as a 5xx, or as a 429",
    rule: 'Errors: a server error is a 5xx, "Retry with backoff", and the document lists no 503: a 429 ("Slow down") is as true; a 400 would blame the request, a 2xx would hide the failure',
  },
];

/** The upstream errors that carry retry-after. */
const WITH_RETRY_AFTER = ['429', '503'];

const SHOULD = 'gateway practice (the API document is silent)';

/** Fields of a forwarded chat besides the base's, each inside its documented range and not a default. */
const CHAT_FORWARDED = { temperature: 1.7, top_p: 0.35, max_tokens: 7, stop: ['~uam-stop~'] };

/** What a forwarding case sends beyond the suite's base request: every field of the operation's request table. */
function forwarded(op: string, base: Readonly<Record<string, unknown>>, values: SuiteValues): Record<string, unknown> {
  switch (op) {
    case 'chat.completions':
      return {
        ...CHAT_FORWARDED,
        messages: [{ role: 'system', content: 'Answer in one short sentence.' }, ...(base.messages as unknown[])],
      };
    case 'images.generate':
      return { size: '1792x1024', quality: 'hd', style: 'natural', n: 1 };
    case 'video.generate':
      return { duration: 8, resolution: '768x1280', seed: 42 };
    case 'voice.tts':
      return { model_id: values.ttsModel, voice_settings: { stability: 0.4, similarity_boost: 0.7 } };
    case 'cloud.speech':
      return { style: 'cheerful', rate: 10, pitch: -5 };
    default:
      return {};
  }
}

/** A copy of a body with the text at a TEXT_FIELDS path set (a negative index counts from the end of a list). */
function withText(body: Readonly<Record<string, unknown>>, path: string, text: string): Record<string, unknown> {
  const copy = structuredClone(body) as Record<string, unknown>;
  const parts = path.split('.');
  let node: unknown = copy;
  for (const part of parts.slice(0, -1)) {
    node = Array.isArray(node) ? node.at(Number(part)) : (node as Record<string, unknown>)[part];
  }
  const last = parts[parts.length - 1]!;
  if (Array.isArray(node)) node[(Number(last) + node.length) % node.length] = text;
  else (node as Record<string, unknown>)[last] = text;
  return copy;
}

/** The text a body carries at its operation's TEXT_FIELDS path. */
export function textOf(op: string, body: Readonly<Record<string, unknown>>): string {
  let node: unknown = body;
  for (const part of TEXT_FIELDS[op]!.split('.'))
    node = Array.isArray(node) ? node.at(Number(part)) : (node as Record<string, unknown> | undefined)?.[part];
  return String(node);
}

/** What the case table is built from: the suite's requests, the run's values, its token prefix and its settings. */
interface CaseSource {
  readonly bases: readonly OperationBase[];
  readonly values: SuiteValues;
  /** Unique to the run: every token starts with it. */
  readonly run: string;
  /** How many streams the isolation case sends at once. */
  readonly streams: number;
  /** The chat model's output limit in the mock's catalogue (max_tokens at its maximum), when it lists the model. */
  readonly maxOutputTokens?: number;
}

/** A case as the table below writes it (its id without `gateway.`; its request is its first probe's first). */
interface CaseSpec {
  readonly id: string;
  readonly level: Level;
  readonly description: string;
  readonly rule: string;
  readonly tags: readonly string[];
  readonly checks: readonly CheckName[];
  readonly probes: readonly string[];
  readonly judge: JudgeName;
  /** The status the client should get, for the plan and the reports (200 when absent). */
  readonly status?: number;
  readonly accept?: readonly number[];
  readonly field?: string;
}

/** What a probe request adds to its operation's request: its fault, whether it streams, hangs, ... */
type RequestOptions = Omit<ProbeRequest, 'operation' | 'token' | 'text' | 'body' | 'streamed'> & {
  readonly streamed?: boolean;
};

/** The cases and probes being written, and the run's tokens. */
class CaseTable {
  readonly probes = new Map<string, Probe>();
  readonly cases: GatewayCase[] = [];
  private n = 0;

  constructor(private readonly run: string) {}

  /** A request of the operation, `extra` on its base request, its text marked with a new token. */
  request(b: OperationBase, extra: Record<string, unknown> = {}, options: RequestOptions = {}): ProbeRequest {
    const token = `uam-${this.run}-${++this.n}`;
    const text = `${token} ${textOf(b.operation, b.base)}`;
    return {
      operation: b.operation,
      token,
      text,
      body: withText({ ...b.base, ...extra }, TEXT_FIELDS[b.operation]!, text),
      streamed: options.streamed ?? false,
      ...options,
    };
  }

  /** Adds a probe; returns its key. */
  probe(key: string, phase: Phase, requests: ProbeRequest[]): string {
    this.probes.set(key, { key, phase, requests });
    return key;
  }

  add(b: OperationBase, spec: CaseSpec): void {
    const first = this.probes.get(spec.probes[0]!)!.requests[0]!;
    const op = operation(first.operation);
    this.cases.push({
      case: {
        id: `gateway.${spec.id}`,
        operation: b.operation,
        description: spec.description,
        rule: spec.rule,
        tags: [...new Set(['gateway', ...spec.tags, b.prefix, ...(first.streamed ? ['stream'] : [])])],
        profile: 'gateway',
        level: spec.level,
        // The upstream is the mock: nothing a gateway case sends is paid for.
        billable: false,
        cost: zeroCost(),
        request: { method: op.method as 'POST', path: op.path, auth: 'valid', headers: {}, body: first.body },
        expect: { status: spec.status ?? 200, checks: spec.checks },
      },
      probes: spec.probes,
      judge: spec.judge,
      ...(spec.accept ? { accept: spec.accept } : {}),
      ...(spec.field ? { field: spec.field } : {}),
    });
  }
}

/** Every case of the gateway profile and the probes they read, for the operations the suite has a request for. */
export function gatewayCases(src: CaseSource): { cases: GatewayCase[]; probes: Map<string, Probe> } {
  const t = new CaseTable(src.run);
  const bases = src.bases.filter((b) => TEXT_FIELDS[b.operation]);
  for (const b of bases) operationCases(t, b, src.values);
  const chat = bases.find((b) => b.operation === 'chat.completions');
  if (chat) chatCases(t, chat, src);
  const primary = chat ?? bases[0];
  if (primary) commonCases(t, primary);
  return { cases: t.cases, probes: t.probes };
}

/** The cases of every operation: its parameters and answer forwarded, the upstream's errors relayed. */
function operationCases(t: CaseTable, b: OperationBase, values: SuiteValues): void {
  const s = b.prefix;
  const forward = t.probe(`forward:${s}`, 'parallel', [t.request(b, forwarded(b.operation, b.base, values))]);
  t.add(b, {
    id: `forward.${s}`,
    level: 'must',
    description: `what reaches the upstream carries the client's ${s} parameters unchanged (or as the gateway documents), and the client gets the upstream's success`,
    rule: "Resources and their fields: the request's fields mean what the document says only if the model gets them as sent",
    tags: ['forward'],
    checks: ['status', 'upstream', 'forwarded'],
    probes: [forward],
    judge: 'forward',
  });
  t.add(b, {
    id: `answer.${s}`,
    level: 'should',
    description: "the client's answer is the upstream's: every field and value the upstream answered, or its bytes",
    rule: `${SHOULD}: a gateway relays the model's answer; the document shows no response body`,
    tags: ['answer'],
    checks: ['answer'],
    probes: [forward],
    judge: 'answer',
  });
  const errors: Record<string, string> = {};
  for (const e of ERRORS) {
    errors[e.name] = t.probe(`error:${s}:${e.name}`, 'parallel', [t.request(b, {}, { fault: e.fault })]);
    t.add(b, {
      id: `error.${s}.${e.name}`,
      level: e.level,
      description: e.description,
      rule: e.rule,
      tags: ['error'],
      checks: ['status'],
      probes: [errors[e.name]!],
      judge: 'error-status',
      accept: e.accept,
      status: e.accept[0]!,
    });
  }
  t.add(b, {
    id: `error.${s}.retry-after`,
    level: 'should',
    description: "the retry-after of the upstream's 429 and 503 reaches the client",
    rule: `${SHOULD}: retry-after tells the client when to come back; without it every client retries at once`,
    tags: ['error', 'retry-after'],
    checks: ['retry-after'],
    probes: WITH_RETRY_AFTER.map((name) => errors[name]!),
    judge: 'retry-after',
    status: 429,
  });
  t.add(b, {
    id: `error.${s}.envelope`,
    level: 'should',
    description:
      'the upstream\'s errors reach the client in the error envelope {"error":{"message","type","param","code"}}',
    rule: `${SHOULD}: the envelope the upstream sent is what SDKs read; the document shows no error body`,
    tags: ['error', 'envelope'],
    checks: ['error-envelope'],
    probes: ERRORS.map((e) => errors[e.name]!),
    judge: 'envelope',
    status: 400,
  });
  const broken = t.probe(`error:${s}:malformed`, 'parallel', [t.request(b, {}, { fault: { malformed: true } })]);
  t.add(b, {
    id: `error.${s}.malformed`,
    level: 'should',
    description:
      "the upstream's 200 with a broken body reaches the client as a 5xx with an error object and its message, or as the upstream's bytes unchanged",
    rule: `${SHOULD}: a gateway that reads the answer says it failed; one that relays bytes relays them as they came`,
    tags: ['error', 'malformed'],
    checks: ['status', 'error-envelope'],
    probes: [broken],
    judge: 'malformed',
    status: 502,
  });
}

const STREAM = { stream: true, stream_options: { include_usage: true } };

/** The cases only chat has: its stream, and values outside their documented range. */
function chatCases(t: CaseTable, b: OperationBase, src: CaseSource): void {
  const streamed = { streamed: true };
  const forwardStream = t.probe('forward:chat@stream', 'streams', [
    t.request(b, { ...forwarded(b.operation, b.base, src.values), ...STREAM }, streamed),
  ]);
  t.add(b, {
    id: 'forward.chat@stream',
    level: 'must',
    description:
      "a streamed chat reaches the upstream with the client's parameters, and the client gets the upstream's event stream",
    rule: 'Endpoints, note 1: when stream is true the reply is delivered in chunks; Resources and their fields: stream, as sent',
    tags: ['forward'],
    checks: ['status', 'upstream', 'forwarded'],
    probes: [forwardStream],
    judge: 'forward',
  });
  // The documented ranges' own edges: a gateway that clamps to a narrower range (a provider's 0 to 1) changes them.
  for (const [edge, values] of [
    ['maximum', { temperature: 2, top_p: 1, ...(src.maxOutputTokens ? { max_tokens: src.maxOutputTokens } : {}) }],
    ['minimum', { temperature: 0, top_p: 0, max_tokens: 1 }],
  ] as const) {
    const key = t.probe(`forward:chat@${edge}`, 'parallel', [t.request(b, values)]);
    t.add(b, {
      id: `forward.chat.at-${edge}`,
      level: 'must',
      description: `temperature, top_p and max_tokens at the ${edge} of their documented ranges (${Object.entries(
        values,
      )
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}) reach the upstream unchanged`,
      rule: `Limits: temperature 0 to 2, top_p 0 to 1, max_tokens at least 1${src.maxOutputTokens ? ` (the model's output limit ${src.maxOutputTokens})` : ''}; each edge is a valid value`,
      tags: ['forward', 'limits'],
      checks: ['status', 'upstream', 'forwarded'],
      probes: [key],
      judge: 'forward',
    });
  }
  for (const [field, value, range] of [
    ['temperature', 2.5, '0 to 2'],
    ['top_p', 1.5, '0 to 1'],
  ] as const) {
    const key = t.probe(`forward:chat.${field}`, 'parallel', [t.request(b, { [field]: value, max_tokens: 3 })]);
    t.add(b, {
      id: `forward.chat.${field}.above-maximum`,
      level: 'must',
      description: `${field} ${value} (range ${range}) is answered 400, and reaches the upstream unchanged if it is sent on (not clamped)`,
      rule: `Limits: ${field} ${range}; a request that breaks these limits is an invalid-parameter case (400)`,
      tags: ['forward', 'limits'],
      checks: ['status', 'forwarded'],
      probes: [key],
      judge: 'out-of-range',
      field,
      status: 400,
    });
  }
  const events = t.probe('stream:events', 'streams', [t.request(b, STREAM, streamed)]);
  t.add(b, {
    id: 'stream.events',
    level: 'should',
    description:
      "the client's stream carries the upstream's events: the content in order, the finish_reason, the usage and data: [DONE]",
    rule: `${SHOULD}: a gateway relays the model's stream; the document does not show the chunks`,
    tags: ['stream'],
    checks: ['events'],
    probes: [events],
    judge: 'events',
  });
  const gap = t.probe('stream:gap', 'gap', [t.request(b, { ...STREAM, max_tokens: 2 }, streamed)]);
  t.add(b, {
    id: 'stream.first-event',
    level: 'should',
    description:
      "the client reads the stream's first event within the bound (--first-event-bound) of the upstream writing it: the stream is not buffered",
    rule: `${SHOULD}: a buffered stream makes the time to first token the time of the whole answer`,
    tags: ['stream', 'timing'],
    checks: ['first-event'],
    probes: [gap],
    judge: 'first-event',
  });
  t.add(b, {
    id: 'stream.pacing',
    level: 'should',
    description:
      "every later event of a paced stream reaches the client within the bound of the upstream writing it: the gateway keeps the upstream's pacing",
    rule: `${SHOULD}: events held and sent in batches make a steady stream arrive in jerks`,
    tags: ['stream', 'timing'],
    checks: ['pacing'],
    probes: [gap],
    judge: 'pacing',
  });
  // A cut the gateway does not pass on is waited for as a hung upstream is: up to the gateway's timeout.
  const cut = t.probe('stream:cut', 'streams', [
    t.request(b, STREAM, { streamed: true, fault: { streamCut: 3 }, hangs: true }),
  ]);
  t.add(b, {
    id: 'stream.cut',
    level: 'must',
    description:
      "a stream the upstream cuts ends the client's stream as an error, never with data: [DONE] and never left open",
    rule: 'Errors: a failure is not a success; a cut reply ended as if complete is a partial answer the client takes as whole',
    tags: ['stream'],
    checks: ['stream-end'],
    probes: [cut],
    judge: 'cut',
  });
  const isolation = t.probe(
    'stream:isolation',
    'paced',
    Array.from({ length: src.streams }, () => t.request(b, { ...STREAM, max_tokens: 24 }, streamed)),
  );
  t.add(b, {
    id: 'stream.isolation',
    level: 'must',
    description: `${src.streams} concurrent streams with distinct content each reach their own client whole and unmixed`,
    rule: "Endpoints, note 1: chat generates text for the request's messages; another request's text is no answer to it",
    tags: ['stream', 'concurrency'],
    checks: ['isolation'],
    probes: [isolation],
    judge: 'isolation',
  });
}

/** The cases of how the gateway treats its upstream, sent on the primary operation (chat when carried). */
function commonCases(t: CaseTable, b: OperationBase): void {
  // The delay is the runner's to set: past its own wait (docs/gateway.md).
  const hung = [t.request(b, {}, { fault: { delayMs: 0 }, hangs: true })];
  if (b.operation === 'chat.completions')
    hung.push(t.request(b, STREAM, { streamed: true, fault: { stall: 2 }, hangs: true }));
  const timeout = t.probe('timeout', 'hang', hung);
  t.add(b, {
    id: 'timeout.hung-upstream',
    level: 'should',
    description:
      "an upstream that hangs before its answer (and, for chat, in the middle of a stream) gets the client an error within the gateway's timeout (--gateway-timeout), not a hang",
    rule: `${SHOULD}: a gateway bounds its wait for a provider; the document states no timeout`,
    tags: ['timeout'],
    checks: ['timeout'],
    probes: [timeout],
    judge: 'timeout',
    status: 504,
  });
  const after = t.probe('retries:retry-after', 'parallel', [
    t.request(b, {}, { fault: { status: 503, retryAfter: 1 }, times: 1 }),
  ]);
  t.add(b, {
    id: 'retries.retry-after',
    level: 'should',
    description:
      "a gateway that retries an upstream 503 waits the retry-after the upstream asked for (the attempts are counted in the upstream's journal)",
    rule: `${SHOULD}: a retry before retry-after adds load to an overloaded provider`,
    tags: ['retries'],
    checks: ['retries'],
    probes: [after],
    judge: 'retries-retry-after',
  });
  const backoff = t.probe('retries:backoff', 'parallel', [t.request(b, {}, { fault: { status: 500 }, times: 2 })]);
  t.add(b, {
    id: 'retries.backoff',
    level: 'should',
    description:
      "a gateway that retries an upstream 500 backs off between attempts (the attempts are counted in the upstream's journal)",
    rule: `${SHOULD} and Errors: 500 "Retry with backoff"; retries at once multiply a provider's overload`,
    tags: ['retries'],
    checks: ['retries'],
    probes: [backoff],
    judge: 'retries-backoff',
  });
  const secret = t.probe('secrets', 'parallel', [t.request(b)]);
  t.add(b, {
    id: 'secrets.key',
    level: 'should',
    description:
      "the client's key does not reach the upstream (unless the gateway is documented to pass it through: --key-passthrough)",
    rule: 'Authentication 4: keep the key secret, store keys on the server side only; a gateway uses its own key upstream',
    tags: ['secrets'],
    checks: ['secret'],
    probes: [secret],
    judge: 'secret',
  });
}
