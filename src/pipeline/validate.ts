import { IGNORED_FIELDS_HEADER, ignoredFieldsHeader, shapeOf, unknownFields } from '../contract/knownFields.js';
import { strictId, type SchemaRegistry } from '../contract/schemas.js';
import type { Limits } from '../domain/limits.js';
import { invalidBody, toDetails } from '../contract/validation.js';
import type { EchoMask } from '../domain/secrets.js';
import type { ApiError } from '../contract/errors.js';
import { REQUEST_TEXTS, kept } from '../lib/memo.js';
import { addHeader } from './requestContext.js';
import type { Step } from './steps.js';

/** Whether a JSON value holds more than `limit` values in all (counted without recursion). */
function holdsMoreThan(value: unknown, limit: number): boolean {
  const stack = [value];
  for (let n = 0; stack.length; n++) {
    if (n > limit) return true;
    const v = stack.pop();
    if (v && typeof v === 'object') for (const child of Object.values(v)) stack.push(child);
  }
  return false;
}

/**
 * Checks the body against the operation's request schema; a 400 names the field, the rule and the violations.
 * A valid body's fields that the schema does not list (accepted and ignored outside --strict) are named in
 * the x-mock-ignored-fields header and the journal, each field name masked by `secrets` (a key sent as a
 * field name is named masked). Finding them is one walk over the listed objects' keys, no second validation.
 */
export function validate(
  schemas: SchemaRegistry,
  strict: boolean,
  limits: Limits['requests'],
  secrets?: Pick<EchoMask, 'text'>,
): Step {
  const name = secrets ? (key: string) => secrets.text(key) : undefined;
  // A body refused once is refused again the same way: a client's retry, a test run's or a load test's repeated
  // request. Its 400 depends on the schema and the body's text alone, so it is kept, keyed by the two (one memo
  // for every schema, bounded as every memo of request texts is), and answered again as it is, its envelope's
  // JSON made once (ApiError.toJson).
  const refusals = kept<ApiError>(REQUEST_TEXTS.entries, REQUEST_TEXTS.keyChars);
  return function validate(ctx, state) {
    const schema = state.operation!.requestSchema;
    if (!schema) return;
    const id = strict ? strictId(schema) : schema;
    const body = state.body;
    const firstError = schemas.checkFirst(id, body);
    if (!firstError.length) {
      // Under --strict an unknown field is a 400 already.
      const shape = strict ? undefined : shapeOf(schema);
      const ignored = shape && unknownFields(shape, body, limits.maxIgnoredFields, name);
      if (ignored?.length) {
        state.ignoredFields = ignored;
        addHeader(ctx.res, state, IGNORED_FIELDS_HEADER, ignoredFieldsHeader(ignored, limits.ignoredFieldsHeaderChars));
      }
      return;
    }
    const refuse = (): ApiError => {
      // Each value takes at least one character of the text: a short text cannot hold too many.
      const many =
        (state.raw ?? '').length > limits.maxValuesForAllErrors && holdsMoreThan(body, limits.maxValuesForAllErrors);
      return invalidBody(toDetails(many ? firstError : schemas.check(id, body)), limits.maxDetails);
    };
    return state.raw === undefined ? refuse() : refusals(`${id}\u0000${state.raw}`, refuse);
  };
}
