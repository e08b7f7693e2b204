import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Socket } from 'node:net';
import { Frames } from '../../src/pipeline/frames.js';

/** A socket as the frames see it after a write: how many bytes it still holds. */
const holding = (writableLength: number) => ({ writableLength }) as Socket;

/** The frame chunked transfer coding makes of `text`. */
const chunked = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

test('a chunk is framed with its size in hex, whatever the width of the size', () => {
  const frames = new Frames(16);
  for (const size of [1, 15, 16, 255, 256, 4095, 4096, 70_000]) {
    frames.clear();
    const text = 'é'.repeat(Math.floor(size / 2)) + 'x'.repeat(size % 2);
    frames.put(Buffer.from(text));
    assert.is(frames.length, size);
    assert.is(frames.framed().toString(), chunked(text), `a chunk of ${size} bytes`);
    frames.sent(holding(0));
  }
});

test('a chunk that starts with the same piece as the last finds it in place; another piece is copied', () => {
  const frames = new Frames();
  const head = Buffer.from('data: {"id":"a",');
  const other = Buffer.from('data: {"id":"b",');
  const text: string[] = [];
  for (const [first, rest] of [
    [head, '"n":1}\n\n'],
    [head, '"n":22}\n\n'],
    [other, '"n":3}\n\n'],
    [head, '"n":4}\n\n'],
  ] as const) {
    frames.clear();
    frames.put(first);
    frames.put(Buffer.from(rest));
    text.push(frames.framed().toString());
    frames.sent(holding(0));
  }
  assert.equal(text, [
    chunked('data: {"id":"a","n":1}\n\n'),
    chunked('data: {"id":"a","n":22}\n\n'),
    chunked('data: {"id":"b","n":3}\n\n'),
    chunked('data: {"id":"a","n":4}\n\n'),
  ]);
});

test('the buffer is made once while every write takes it whole', () => {
  const frames = new Frames();
  const head = Buffer.from('data: {"id":"a",');
  const views = Array.from({ length: 3 }, (_, i) => {
    frames.clear();
    frames.put(head);
    frames.put(Buffer.from(`"n":${i}}\n\n`));
    const view = frames.framed();
    frames.sent(holding(0));
    return view;
  });
  assert.ok(views.every((v) => v.buffer === views[0]!.buffer && v.byteOffset === views[0]!.byteOffset));
});

test('bytes a write still holds are never written again: the next chunk is made in a new buffer', () => {
  const frames = new Frames();
  const head = Buffer.from('data: {"id":"a",');
  frames.clear();
  frames.put(head);
  frames.put(Buffer.from('"n":1}\n\n'));
  const held = frames.framed();
  frames.sent(holding(held.length)); // the socket could not take it at once
  const before = held.toString();
  frames.clear();
  frames.put(head);
  frames.put(Buffer.from('"n":2,"more":"xxxxxxxxxxxxxxxx"}\n\n'));
  const next = frames.framed();
  assert.is(held.toString(), before, 'the held bytes are as they were written');
  assert.is(next.toString(), chunked('data: {"id":"a","n":2,"more":"xxxxxxxxxxxxxxxx"}\n\n'));
  const apart =
    next.buffer !== held.buffer ||
    next.byteOffset >= held.byteOffset + held.length ||
    held.byteOffset >= next.byteOffset + next.length;
  assert.ok(apart, 'the next chunk is made in other memory');
});

test('a chunk larger than the buffer grows it, the first piece kept', () => {
  const frames = new Frames(32);
  const head = Buffer.from('data: {"id":"a",');
  frames.clear();
  frames.put(head);
  frames.put(Buffer.from('"n":1}\n\n'));
  frames.sent(holding(0));
  frames.clear();
  frames.put(head);
  const long = `"t":"${'y'.repeat(200)}"}\n\n`;
  frames.put(Buffer.from(long));
  assert.is(frames.framed().toString(), chunked(`data: {"id":"a",${long}`));
  frames.sent(holding(0));
  frames.clear();
  frames.put(head);
  frames.put(Buffer.from('"n":3}\n\n'));
  assert.is(frames.framed().toString(), chunked('data: {"id":"a","n":3}\n\n'));
});

test('the chunk as bytes of its own: later chunks do not change it', () => {
  const frames = new Frames();
  frames.clear();
  frames.put(Buffer.from('data: 1\n\n'));
  const own = frames.chunk();
  frames.clear();
  frames.put(Buffer.from('data: 2\n\n'));
  frames.framed();
  assert.is(own.toString(), 'data: 1\n\n');
});

test.run();
