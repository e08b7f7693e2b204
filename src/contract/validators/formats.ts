import type { Format, FormatDefinition } from 'ajv';
import { requireCjs } from '../../lib/require.js';
import { isBase64 } from '../../lib/base64.js';

// The data-URI form of an image: an image media type (the bytes decide which) or generic binary
// (what a browser's FileReader writes for a file of unknown type), parameters, the base64 marker.
const DATA_URI_PREFIX = /^data:(?:image\/[\w.+-]+|application\/octet-stream)(;[\w.+-]+=[\w.+-]+)*;base64,/i;

/** Where the payload of a base64 or data-URI string begins, without checking it; undefined for a malformed data URI. */
export function base64Offset(value: string): number | undefined {
  if (!value.startsWith('data:')) return 0;
  return DATA_URI_PREFIX.exec(value.slice(0, 256))?.[0].length;
}

/** Splits a base64 or data-URI string into its base64 payload offset; undefined if it is neither. */
export function base64Start(value: string): number | undefined {
  const start = base64Offset(value);
  return start !== undefined && isBase64(value, start) ? start : undefined;
}

/** The formats the schemas define beyond ajv-formats': a generated validator calls the same object. */
export const CUSTOM_FORMATS: Record<string, FormatDefinition<string>> = {
  'base64-image': { type: 'string', validate: (s: string) => base64Start(s) !== undefined },
};

/**
 * Every format by name, for generated validators: ajv-formats' own table (plain regular expressions
 * and functions, loaded without Ajv itself) and ours.
 */
export function allFormats(): Record<string, Format> {
  const { fullFormats } = requireCjs('ajv-formats/dist/formats') as { fullFormats: Record<string, Format> };
  return { ...fullFormats, ...CUSTOM_FORMATS };
}
