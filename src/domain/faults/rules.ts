import { schemaId, type SchemaRegistry } from '../../contract/schemas.js';
import { pointerToParam, toDetails } from '../../contract/validation.js';
import { forbiddenKeyAt, forbiddenKeyMessage } from '../../lib/keys.js';
import { mulberry32 } from '../../lib/prng.js';
import { matches, type RequestFacts, type RuleMatch } from './match.js';
import { describeFault, faultProblem, type FaultLimits, type FaultSpec } from './spec.js';

export type { RequestFacts, RuleMatch } from './match.js';

/** A fault rule as written in the config's `faultRules` or posted to the admin API. */
export interface FaultRule {
  readonly id?: string;
  readonly description?: string;
  readonly match?: RuleMatch;
  readonly fault: FaultSpec;
  /** Fault at most this many matching requests, then answer normally. */
  readonly times?: number;
  /** Chance that a matching request faults, drawn from a generator seeded with `seed`. */
  readonly probability?: number;
  readonly seed?: number;
}

/** A rule with its id and counters, as the admin API lists it. */
export interface RuleView extends FaultRule {
  readonly id: string;
  readonly state: { matched: number; fired: number; remaining: number | null };
}

/** A rule that cannot be accepted; `status` is 400 for a bad rule, 409 for a taken id. */
export class RuleError extends Error {
  override name = 'RuleError';
  constructor(
    message: string,
    readonly param: string | null,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** What rules are checked against besides their schema. */
interface RuleContext {
  readonly operations: readonly string[];
  readonly keyNames: readonly string[];
  readonly limits: FaultLimits;
  /** Most rules held at once (`faults.maxRules` of fixtures/limits.json): rule state stays bounded whatever a client posts. */
  readonly maxRules: number;
}

interface Entry {
  readonly rule: FaultRule & { id: string };
  matched: number;
  fired: number;
  random: () => number;
}

const DEFAULT_SEED = 1;

/** The refusal of a rule past the most a server holds (in memory, or in Redis). */
export const tooMany = (maxRules: number): RuleError =>
  new RuleError(`At most ${maxRules} fault rules can be held; delete some first.`, null);

/** The fault rules of one server, their counters and their seeded generators. */
export class FaultRules {
  private entries: Entry[] = [];
  private issued = 0;

  constructor(
    private readonly schemas: SchemaRegistry,
    private readonly context: RuleContext,
  ) {}

  /** Most rules held at once. */
  get maxRules(): number {
    return this.context.maxRules;
  }

  /** Checks a rule (schema, then what the schema cannot say) and adds it after the others. */
  add(input: unknown): RuleView {
    // Whatever the rule came from (the admin API, a configuration, code): its match.body and match.headers included.
    const forbidden = forbiddenKeyAt(input);
    if (forbidden !== undefined)
      throw new RuleError(`Invalid rule: ${forbiddenKeyMessage(forbidden)}.`, pointerToParam(forbidden));
    const errors = this.schemas.check(schemaId('fault-rule.json'), input);
    if (errors.length) {
      const first = toDetails(errors)[0];
      throw new RuleError(
        first?.message ?? 'The fault rule does not match schemas/fault-rule.json.',
        first?.param ?? null,
      );
    }
    const rule = input as FaultRule;
    const problem = faultProblem(rule.fault, this.context.limits);
    if (problem) throw new RuleError(`Invalid fault: ${problem}.`, 'fault');
    const ops =
      rule.match?.operation === undefined
        ? []
        : typeof rule.match.operation === 'string'
          ? [rule.match.operation]
          : rule.match.operation;
    for (const op of ops) {
      if (!this.context.operations.includes(op))
        throw new RuleError(
          `Unknown operation '${op.slice(0, 64)}'. Use one of: ${this.context.operations.join(', ')}.`,
          'match.operation',
        );
    }
    const key = rule.match?.key;
    if (key !== undefined && !this.context.keyNames.includes(key)) {
      throw new RuleError(
        `No configured key has the name '${key.slice(0, 64)}'. Names: ${this.context.keyNames.join(', ') || '(none)'}.`,
        'match.key',
      );
    }
    if (rule.id !== undefined && this.entries.some((e) => e.rule.id === rule.id))
      throw new RuleError(`A fault rule with id '${rule.id}' already exists.`, 'id', 409);
    if (this.entries.length >= this.maxRules) throw tooMany(this.maxRules);
    let id = rule.id;
    while (id === undefined || this.entries.some((e) => e.rule.id === id)) id = `rule-${++this.issued}`;
    const entry: Entry = { rule: { id, ...rule }, matched: 0, fired: 0, random: mulberry32(rule.seed ?? DEFAULT_SEED) };
    this.entries.push(entry);
    return this.view(entry);
  }

  /** Every rule in the order they are tried. */
  list(): RuleView[] {
    return this.entries.map((e) => this.view(e));
  }

  /** Removes one rule; false when there is none with that id. */
  delete(id: string): boolean {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.rule.id !== id);
    return this.entries.length < before;
  }

  /** Removes every rule; returns how many there were. */
  clear(): number {
    const n = this.entries.length;
    this.entries = [];
    return n;
  }

  /** Puts every rule back to its first state: counters to zero, generators to their seed. */
  reset(): void {
    for (const e of this.entries) {
      e.matched = 0;
      e.fired = 0;
      e.random = mulberry32(e.rule.seed ?? DEFAULT_SEED);
    }
  }

  /**
   * The fault for a request: the first rule that matches, has times left and wins its draw.
   * A rule draws once per matching request, so a seed gives the same sequence of faults.
   */
  pick(req: RequestFacts): { fault: FaultSpec; label: string } | undefined {
    for (const e of this.entries) {
      const { rule } = e;
      if (rule.times !== undefined && e.fired >= rule.times) continue;
      if (!matches(rule.match, req)) continue;
      e.matched++;
      if (rule.probability !== undefined && !(e.random() < rule.probability)) continue;
      e.fired++;
      return { fault: rule.fault, label: `${describeFault(rule.fault)} [rule ${rule.id}]` };
    }
    return undefined;
  }

  private view(e: Entry): RuleView {
    return {
      ...e.rule,
      state: {
        matched: e.matched,
        fired: e.fired,
        remaining: e.rule.times === undefined ? null : e.rule.times - e.fired,
      },
    };
  }
}
