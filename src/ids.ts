import { createHash } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** SHA-256 of the parts: the root of every id and seed, so the same request gives the same body. */
export function digest(...parts: (string | Buffer)[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\u0000');
  return h.digest();
}

/** An id such as chatcmpl-<29 letters and digits>, derived from a digest. */
export function idFrom(d: Buffer, prefix: string, length: number): string {
  let out = prefix;
  for (let i = 0; i < length; i++) out += ALPHABET[d[i % d.length]! % ALPHABET.length];
  return out;
}

/** A 32-bit unsigned seed from a digest. */
export const seedFrom = (d: Buffer, offset = 0): number => d.readUInt32BE(offset % (d.length - 3));

/** Lower-case hex of a digest, cut to `length` characters. */
export const hexFrom = (d: Buffer, length: number): string => d.toString('hex').slice(0, length);
