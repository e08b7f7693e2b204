import { ApiError, ERRORS } from '../contract/errors.js';
import { RuleError } from '../domain/faults/rules.js';
import type { Handler } from '../pipeline/handler.js';

/** GET /__admin/faults: every fault rule, in the order they are tried, with its counters. */
export const listFaultRules: Handler = ({ services }) => ({ kind: 'json', body: { object: 'list', data: services.faultRules.list() } });

/** POST /__admin/faults: adds one rule after the others; the rule and its id (201, the row's success status). */
export const addFaultRule: Handler = ({ body, services }) => {
  try {
    return { kind: 'json', body: services.faultRules.add(body) };
  } catch (err) {
    if (!(err instanceof RuleError)) throw err;
    if (err.status === 409) throw new ApiError(ERRORS.DUPLICATE_RULE_ID, { param: err.param, message: err.message });
    throw new ApiError(ERRORS.VALIDATION, { param: err.param, code: 'invalid_fault_rule', message: err.message });
  }
};

/** DELETE /__admin/faults/:id: removes one rule; 404 when there is none with that id. */
export const deleteFaultRule: Handler = ({ params, services }) => {
  const id = params.id ?? '';
  if (!services.faultRules.delete(id)) throw new ApiError(ERRORS.NOT_FOUND, { code: 'rule_not_found', message: `No fault rule with id '${id.slice(0, 64)}'.` });
  return { kind: 'json', body: { id, deleted: true } };
};

/** DELETE /__admin/faults: removes every rule. */
export const clearFaultRules: Handler = ({ services }) => ({ kind: 'json', body: { deleted: services.faultRules.clear() } });

/** POST /__admin/reset: every key gets its full allowance back; every rule its first state (times, seed). */
export const resetState: Handler = ({ services }) => {
  services.rateLimits.reset();
  services.faultRules.reset();
  return { kind: 'json', body: { reset: ['rate_limits', 'fault_rules'] } };
};

/** GET /__admin/requests: the journal, oldest first. */
export const listRequests: Handler = ({ services }) => {
  const { journal } = services;
  return { kind: 'json', body: { object: 'list', data: journal.entries(), total: journal.total, capacity: journal.capacity } };
};

/** DELETE /__admin/requests: empties the journal. */
export const clearRequests: Handler = ({ services }) => ({ kind: 'json', body: { deleted: services.journal.clear() } });

/** GET /__admin/rate-limits: what each limited key has left, without counting a request. */
export const listRateLimits: Handler = ({ services }) => ({
  kind: 'json',
  body: {
    object: 'list',
    data: services.rateLimits.snapshot(services.keys).map(({ key, requests, tokens }) => ({
      key: key.masked,
      label: key.config.label ?? null,
      requests,
      tokens: tokens ?? null,
    })),
  },
});
