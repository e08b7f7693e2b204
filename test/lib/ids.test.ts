import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { digest, hexFrom, idFrom, idOf, seedFrom, sha256, updateWithText } from '../../src/lib/ids.js';

// The definition every id and seed rests on: each part, then a NUL, fed to one SHA-256.
function reference(...parts: (string | Buffer)[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\u0000');
  return h.digest();
}

test('digest equals SHA-256 over each part followed by a NUL, for short, long, mixed and odd inputs', () => {
  const cases: (string | Buffer)[][] = [
    ['chat.completions', '{"model":"gpt-4o-mini"}'],
    ['gpt-4o'],
    [],
    [''],
    ['a', 'b'],
    ['ab'],
    ['naïve 日本語 🎉', 'x'],
    ['lone \ud800', '\udc00 surrogate halves'],
    ['images.edit', 'x'.repeat(5000)],
    ['images.edit', `${'x'.repeat(5000)}é`],
    ['images.edit', `${'日本'.repeat(3000)}\ud800`],
    ['images.edit', Buffer.from([0, 1, 2, 255])],
  ];
  for (const parts of cases) assert.equal(digest(...parts), reference(...parts), JSON.stringify(parts).slice(0, 60));
  assert.not.equal(digest('a', 'b'), digest('ab'));
});

test('the same request body keeps the same chat id (bodies stay byte-identical across versions)', () => {
  const raw = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say this is a test"}]}';
  assert.is(idFrom(digest('chat.completions', raw), 'chatcmpl-', 29), 'chatcmpl-IPsVARqdHNfXOKi0Y0NVtIxW7Sk2w');
  assert.is(`fp_${hexFrom(digest('gpt-4o-mini'), 10)}`, 'fp_e8b22a2441');
});

test('idOf gives the id idFrom reads from the digest of the same parts, short or long, ASCII or not', () => {
  const cases: string[][] = [
    ['chat.completions', '{"model":"gpt-4o-mini"}'],
    [],
    [''],
    ['naïve 日本語 🎉', 'x'],
    ['lone \ud800', '\udc00 surrogate halves'],
    ['video.generate', 'x'.repeat(5000)],
  ];
  for (const parts of cases) {
    for (const length of [0, 3, 29, 40])
      assert.is(
        idOf('p-', length, ...parts),
        idFrom(digest(...parts), 'p-', length),
        JSON.stringify(parts).slice(0, 60),
      );
  }
  const raw = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say this is a test"}]}';
  assert.is(idOf('chatcmpl-', 29, 'chat.completions', raw), 'chatcmpl-IPsVARqdHNfXOKi0Y0NVtIxW7Sk2w');
});

test('sha256 of strings and bytes', () => {
  assert.is(sha256('abc').toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(sha256(Buffer.from('abc')), sha256('abc'));
});

test('idFrom, seedFrom and hexFrom read the digest', () => {
  const d = Buffer.alloc(32, 0);
  d[0] = 1;
  assert.is(idFrom(d, 'x_', 3), 'x_BAA');
  assert.is(seedFrom(d), 0x01000000);
  assert.is(seedFrom(d, 30), 0); // wraps inside the digest instead of reading past it
  assert.is(hexFrom(d, 4), '0100');
});

test('a long text is hashed a MiB at a time, to the hash of its UTF-8 bytes, surrogate pairs never split', () => {
  const MiB = 1 << 20;
  // A pair across the first piece's end, then ASCII, then a pair on the next boundary.
  const text = `${'a'.repeat(MiB - 1)}🌅${'b'.repeat(MiB - 2)}é🌅${'c'.repeat(1000)}`;
  const whole = (t: string) => createHash('sha256').update(Buffer.from(t, 'utf8')).digest('hex');
  assert.is(updateWithText(createHash('sha256'), text).digest('hex'), whole(text));
  const ascii = 'x'.repeat(3 * MiB + 7);
  assert.is(updateWithText(createHash('sha256'), ascii, 'latin1').digest('hex'), whole(ascii));
  assert.is(digest(text, 'id').toString('hex'), whole(`${text}\u0000id\u0000`));
});

test.run();
