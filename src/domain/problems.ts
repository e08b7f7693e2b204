import type { ErrorObject } from 'ajv';
import { pointerToParam, toDetail } from '../contract/validation.js';
import { closest } from '../lib/suggest.js';

/** Where checked values came from, so that a problem names what the user wrote: the flag, or the file and its key. */
export interface ProblemSource {
  /** The file the values came from (those no flag set). */
  readonly file?: string;
  /** The flag, as written, that set the value at this path (`--api-key 'bad key'` for `['keys', '0', 'key']`). */
  readonly flagAt?: (path: readonly string[]) => string | undefined;
}

interface Node {
  /** A pattern's rule in words (schemas' `x-rule`). */
  readonly 'x-rule'?: string;
  readonly properties?: Readonly<Record<string, unknown>>;
}

const pathOf = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));

/**
 * A schema's errors about a file or the flags, one line each and every one of them: `unknown key 'prot' in mock.json;
 * did you mean 'port'?`, `--api-key 'bad key': must be printable ASCII without spaces`. Needs the
 * validator's `verbose` option (the schema node of each error), which the registry sets.
 */
export function problemLines(errors: readonly ErrorObject[], source: ProblemSource = {}): string[] {
  const inFile = source.file ? ` in ${source.file}` : '';
  const lines = errors.flatMap((e) => {
    const path = pathOf(e.instancePath);
    const node = (e.parentSchema ?? {}) as Node;
    if (e.keyword === 'required') {
      const param = pointerToParam(e.instancePath, String((e.params as { missingProperty: unknown }).missingProperty));
      return [`missing key '${param}'${inFile}`];
    }
    if (e.keyword === 'additionalProperties') {
      const key = String((e.params as { additionalProperty: unknown }).additionalProperty);
      const meant = closest(key, Object.keys(node.properties ?? {}));
      const param = pointerToParam(e.instancePath, key)!;
      const suggestion = meant ? `; did you mean '${pointerToParam(e.instancePath, meant)!}'?` : '';
      return [`unknown key '${param}'${source.flagAt?.(path) ? ` from ${source.flagAt(path)}` : inFile}${suggestion}`];
    }
    const detail = toDetail(e);
    if (!detail) return [];
    const flag = source.flagAt?.(path);
    const where = flag ?? `${detail.param ?? '(root)'}${inFile}`;
    // A pattern is for the validator; its x-rule says it in words. The API's wording names the field again ("Invalid
    // type for 'port': ..."): the line has named it already.
    const message =
      e.keyword === 'pattern' && node['x-rule']
        ? `must be ${node['x-rule']}`
        : detail.message.replace(/^Invalid (?:type |value )?(?:for )?'[^']*':\s*/, '');
    return [`${where}: ${message}`];
  });
  return [...new Set(lines)];
}
