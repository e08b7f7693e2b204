import type { Ranks } from './ranks.js';

/** What a token is, in `kinds`; 0 is a hole (no token has the id). */
const TEXT = 1;
const BYTES = 2;
/** How many token texts are kept made (a power of two): each token id has one slot, id modulo this. */
const RECENT = 4096;

/**
 * A rank table held in three typed arrays instead of an array of 200,000 strings: every token's UTF-16 code units
 * (a byte token's bytes, one a unit) end to end in `units`, where token `id` spans `starts[id]` to `starts[id + 1]`,
 * and what each token is in `kinds`. The heap's collector visits a handful of objects instead of one for every token
 * (o200k_base: 1.1 million units, 3.2 MiB outside the heap in all), and at most 4,096 texts made for decoding. Code units, not bytes: o200k_base has 61,000
 * tokens with characters beyond Latin-1, so one byte a unit would not do.
 */
export class RankTable {
  /** How many ids the table spans (holes included). */
  readonly length: number;
  readonly units: Uint16Array;
  readonly starts: Uint32Array;
  private readonly kinds: Uint8Array;
  /** The texts made last, so that the pieces of replies (kept by completions and streams) share their strings. */
  private readonly recentIds = new Int32Array(RECENT).fill(-1);
  private readonly recentTexts = new Array<string>(RECENT).fill('');

  constructor(ranks: Ranks) {
    this.length = ranks.length;
    this.starts = new Uint32Array(ranks.length + 1);
    this.kinds = new Uint8Array(ranks.length);
    let total = 0;
    for (let id = 0; id < ranks.length; id++) {
      const value = ranks[id];
      this.starts[id] = total;
      if (value === undefined) continue;
      // decodePieces never makes an empty piece, and a text token of no characters could not be told from a hole.
      if (value.length === 0) throw new Error(`token ${id} of the rank table is empty`);
      this.kinds[id] = typeof value === 'string' ? TEXT : BYTES;
      total += value.length;
    }
    this.starts[ranks.length] = total;
    this.units = new Uint16Array(total);
    for (let id = 0; id < ranks.length; id++) {
      const value = ranks[id];
      let at = this.starts[id]!;
      if (typeof value === 'string') for (let i = 0; i < value.length; i++) this.units[at++] = value.charCodeAt(i);
      else if (value !== undefined) for (const b of value) this.units[at++] = b;
    }
  }

  /** True when the token is text (valid UTF-8 alone). */
  isText(id: number): boolean {
    return this.kinds[id] === TEXT;
  }

  /** True when the token is raw bytes that are not valid UTF-8 alone. */
  isBytes(id: number): boolean {
    return this.kinds[id] === BYTES;
  }

  /** The text of a text token; undefined for any other id. */
  text(id: number): string | undefined {
    if (this.kinds[id] !== TEXT) return undefined;
    const slot = id & (RECENT - 1);
    if (this.recentIds[slot] === id) return this.recentTexts[slot];
    const text = String.fromCharCode.apply(null, this.units.subarray(this.starts[id], this.starts[id + 1]) as never);
    this.recentIds[slot] = id;
    this.recentTexts[slot] = text;
    return text;
  }

  /** The bytes of a byte token (a view into the table: do not write to it); undefined for any other id. */
  bytes(id: number): Uint16Array | undefined {
    if (this.kinds[id] !== BYTES) return undefined;
    return this.units.subarray(this.starts[id], this.starts[id + 1]);
  }

  /** The token as the array form of the table holds it (ranks.ts): its text, or its bytes as number[]. */
  at(id: number): string | number[] | undefined {
    return this.text(id) ?? (this.isBytes(id) ? Array.from(this.bytes(id)!) : undefined);
  }

  /**
   * The table with the face of the array gpt-tokenizer's encoder was built over (`table[id]`, `length`), for the
   * encoder's own decode, which reads it and nothing else: one small object in place of the array.
   */
  arrayFace(): Ranks {
    const at = (id: number): string | number[] | undefined => this.at(id);
    return new Proxy([] as Array<string | number[] | undefined>, {
      get: (target, key, receiver) => {
        if (key === 'length') return this.length;
        if (typeof key === 'string' && /^(0|[1-9]\d*)$/.test(key)) return at(Number(key));
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
  }
}
