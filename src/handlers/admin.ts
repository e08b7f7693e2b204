import { ApiError, ERRORS } from '../contract/errors.js';
import { SUBSCHEMA_IDS } from '../contract/schemas.js';
import { invalidBody, toDetails } from '../contract/validation.js';
import { RuleError } from '../domain/faults/rules.js';
import type { Handler } from '../pipeline/handler.js';
import type { Reply } from '../contract/reply.js';
import type { Awaitable } from '../domain/state/store.js';
import type { LatencyChange, LatencyView } from '../domain/latency/types.js';

// The state answers at once in memory, later from Redis: the reply follows it either way.
function json<T>(value: Awaitable<T>, body: (v: T) => unknown): Awaitable<Reply> {
  return value instanceof Promise
    ? value.then((v) => ({ kind: 'json', body: body(v) }))
    : { kind: 'json', body: body(value) };
}

/** GET /__admin/faults: every fault rule, in the order they are tried, with its counters. */
export const listFaultRules: Handler = ({ services }) =>
  json(services.state.rules(), (data) => ({ object: 'list', data }));

/** POST /__admin/faults: adds one rule after the others; the rule and its id (201, the row's success status). */
function ruleError(err: unknown): unknown {
  if (!(err instanceof RuleError)) return err;
  if (err.status === 409) return new ApiError(ERRORS.DUPLICATE_RULE_ID, { param: err.param, message: err.message });
  return new ApiError(ERRORS.VALIDATION, { param: err.param, code: 'invalid_fault_rule', message: err.message });
}

export const addFaultRule: Handler = ({ body, services }) => {
  try {
    const added = services.state.addRule(body);
    if (!(added instanceof Promise)) return { kind: 'json', body: added };
    return added.then(
      (rule): Reply => ({ kind: 'json', body: rule }),
      (err: unknown) => {
        throw ruleError(err);
      },
    );
  } catch (err) {
    throw ruleError(err);
  }
};

/** DELETE /__admin/faults/:id: removes one rule; 404 when there is none with that id. */
export const deleteFaultRule: Handler = ({ params, services }) => {
  const id = params.id ?? '';
  return json(services.state.deleteRule(id), (deleted) => {
    if (!deleted)
      throw new ApiError(ERRORS.NOT_FOUND, {
        code: 'rule_not_found',
        message: `No fault rule with id '${id.slice(0, services.limits.messages.maxQuotedChars)}'.`,
      });
    return { id, deleted: true };
  });
};

/** DELETE /__admin/faults: removes every rule. */
export const clearFaultRules: Handler = ({ services }) => json(services.state.clearRules(), (deleted) => ({ deleted }));

/** POST /__admin/reset: every key gets its full allowance back; every rule its first state (times, seed). */
export const resetState: Handler = ({ services }) => {
  const limits = services.state.resetLimits(services.keys);
  const rules = services.state.resetRules();
  const body = { reset: ['rate_limits', 'fault_rules'] };
  if (limits instanceof Promise || rules instanceof Promise)
    return Promise.all([limits, rules]).then((): Reply => ({ kind: 'json', body }));
  return { kind: 'json', body };
};

/** GET /__admin/requests: the journal, oldest first. */
export const listRequests: Handler = ({ services }) =>
  json(services.journal.view(), ({ entries, total, capacity, unrecorded }) => ({
    object: 'list',
    data: entries,
    total,
    capacity,
    ...(unrecorded === undefined ? {} : { unrecorded }),
  }));

/** DELETE /__admin/requests: empties the journal (and the response bodies held for it). */
export const clearRequests: Handler = ({ services }) => {
  services.responseBodies.clear();
  return json(services.journal.clear(), (deleted) => ({ deleted }));
};

/** GET /__admin/streams: open and started streams, and how late their paced events were (this instance's). */
export const streamStats: Handler = ({ services }) => ({ kind: 'json', body: services.streams.toJson() });

/** DELETE /__admin/streams: clears the lateness figures and the count of started streams (open ones stay counted). */
export const clearStreamStats: Handler = ({ services }) => {
  services.streams.clear();
  return { kind: 'json', body: services.streams.toJson() };
};

/** GET /__admin/rate-limits: what each limited key has left, without counting a request. */
export const listRateLimits: Handler = ({ services }) =>
  json(services.state.limitSnapshot(services.keys), (snapshot) => ({
    object: 'list',
    data: snapshot.map(({ key, requests, tokens }) => ({
      key: key.masked,
      name: key.config.name ?? null,
      // The old spelling of name, kept for the scripts that read it.
      label: key.config.name ?? null,
      requests,
      tokens: tokens ?? null,
    })),
  }));

// Each model's line also carries this instance's running and waiting requests of it (services.load), read when
// asked: the settings do not keep them.
function latencyBody({ services }: Parameters<Handler>[0], view: LatencyView): Reply {
  const { load } = services;
  return {
    kind: 'json',
    body: {
      ...view,
      models: view.models.map((m) => ({ ...m, running: load.running(m.model), waiting: load.waiting(m.model) })),
    },
  };
}

/** GET /__admin/latency: the latency settings in force on this instance, each profile's figures worked out. */
export const latencyView: Handler = (req) => latencyBody(req, req.services.latency.view());

// The profiles of a change are checked against the catalogue's own definition here rather than in the request schema:
// there its validator (a distribution is one of five shapes, three times over) would be built into every variant
// of the request validators the server loads at start-up.
const PROFILES = SUBSCHEMA_IDS.latencyProfiles;

/** PUT /__admin/latency: changes the settings from the next request on (the body checked against its schema). */
export const updateLatency: Handler = (req) => {
  const { services } = req;
  const change = req.body as LatencyChange;
  if (change.profiles !== undefined) {
    const errors = services.schemas.check(PROFILES, change.profiles);
    if (errors.length)
      throw invalidBody(
        toDetails(errors.map((e) => ({ ...e, instancePath: `/profiles${e.instancePath}` }))),
        services.limits.requests.maxDetails,
      );
  }
  const view = services.latency.update(change);
  services.load.settle(); // a cap raised (or taken away) lets the waiters it makes room for in now
  return latencyBody(req, view);
};

/** DELETE /__admin/latency: back to the configuration's settings. */
export const resetLatency: Handler = (req) => {
  const view = req.services.latency.reset();
  req.services.load.settle();
  return latencyBody(req, view);
};
