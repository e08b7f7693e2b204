/** Which requests a rule applies to; every field given must match. */
export interface RuleMatch {
  readonly operation?: string | readonly string[];
  /** The key's label in the configuration (e.g. "limited"). */
  readonly key?: string;
  readonly model?: string;
  /** Header name (any case) to exact value. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Body field (dotted path for nested fields) to the JSON value it must equal; a whole number in the path is an index
   * into a list, counted from the end when negative (`messages.-1.content`: the last message's content).
   */
  readonly body?: Readonly<Record<string, unknown>>;
}

/** What a rule can look at in a request. */
export interface RequestFacts {
  readonly operation: string;
  readonly keyName: string | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Readonly<Record<string, unknown>> | undefined;
}

// A list index in a dotted path: a whole number, negative to count from the end.
const INDEX = /^-?\d+$/;

function fieldAt(body: Readonly<Record<string, unknown>> | undefined, path: string): unknown {
  let node: unknown = body;
  for (const part of path.split('.')) {
    if (!node || typeof node !== 'object') return undefined;
    if (Array.isArray(node)) {
      if (!INDEX.test(part)) return undefined;
      node = node.at(Number(part));
    } else node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/** True when a request meets every field of a rule's match (no match object: every request). */
export function matches(match: RuleMatch | undefined, req: RequestFacts): boolean {
  if (!match) return true;
  const ops =
    match.operation === undefined
      ? undefined
      : typeof match.operation === 'string'
        ? [match.operation]
        : match.operation;
  if (ops && !ops.includes(req.operation)) return false;
  if (match.key !== undefined && match.key !== req.keyName) return false;
  if (match.model !== undefined && fieldAt(req.body, 'model') !== match.model) return false;
  for (const [name, want] of Object.entries(match.headers ?? {})) {
    const got = req.headers[name.toLowerCase()];
    if ((Array.isArray(got) ? got.join(', ') : got) !== want) return false;
  }
  for (const [path, want] of Object.entries(match.body ?? {})) if (!same(fieldAt(req.body, path), want)) return false;
  return true;
}
