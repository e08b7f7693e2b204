import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { StreamStats } from '../../src/domain/lateness.js';
import { RequestEnd } from '../../src/pipeline/requestEnd.js';

/** A connection, and responses on it as node:http makes them: the first holds the socket, the next are queued. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  close(): void {
    this.destroyed = true;
    this.emit('close');
  }
}
class FakeRes extends EventEmitter {
  destroyed = false;
  writableFinished = false;
  constructor(
    readonly socket: FakeSocket | null,
    readonly req: { socket: FakeSocket },
  ) {
    super();
  }
  destroy(): void {
    this.destroyed = true; // as Node 20 to 24 do for a queued response: no 'close'
  }
}
const asRes = (res: FakeRes) => res as unknown as ServerResponse;

function connection(queued: number) {
  const socket = new FakeSocket();
  const first = new FakeRes(socket, { socket });
  const rest = Array.from({ length: queued }, () => new FakeRes(null, { socket }));
  return { socket, first, rest };
}

test('a response queued behind another is told once when its connection closes, and destroyed', () => {
  const { socket, rest } = connection(1);
  const end = new RequestEnd(asRes(rest[0]!));
  let told = 0;
  end.onClose(() => told++);
  assert.not.ok(end.closed);
  socket.close();
  assert.ok(end.closed);
  assert.ok(rest[0]!.destroyed);
  rest[0]!.emit('close'); // Node 26 tells it too: still once
  assert.is(told, 1);
});

test('the response holding the connection is told by its own close', () => {
  const { socket, first } = connection(0);
  const end = new RequestEnd(asRes(first));
  let told = 0;
  end.onClose(() => told++);
  first.emit('close');
  socket.close();
  assert.is(told, 1);
  assert.ok(end.closed);
});

test('however many responses are queued, the connection carries one listener, gone once they end', () => {
  const { socket, rest } = connection(20);
  const ends = rest.map((res) => new RequestEnd(asRes(res)));
  assert.is(socket.listenerCount('close'), 1);
  let told = 0;
  for (const end of ends) end.onClose(() => told++);
  socket.close();
  assert.is(told, 20);
  assert.is(socket.listenerCount('close'), 0);
});

test('a wait taken back is not told; a finished request is watched no more', () => {
  const { socket, rest } = connection(2);
  const [a, b] = rest.map((res) => new RequestEnd(asRes(res)));
  let told = 0;
  const wait = () => told++;
  a!.onClose(wait);
  a!.offClose(wait);
  b!.onClose(wait);
  assert.is(b!.waiting, 1);
  b!.finish();
  assert.is(b!.waiting, 0);
  socket.close();
  assert.is(told, 0);
  assert.ok(a!.closed);
});

test('a response whose connection closed before its request was handled is closed from the start', () => {
  const { socket, rest } = connection(1);
  socket.close();
  assert.ok(new RequestEnd(asRes(rest[0]!)).closed);
});

test('the stream a request counts is open until it finishes, counted once', () => {
  const { first } = connection(0);
  const stats = new StreamStats();
  const end = new RequestEnd(asRes(first));
  end.countStream(stats);
  end.countStream(stats);
  assert.equal([stats.open, stats.started], [1, 1]);
  end.finish();
  end.finish();
  assert.equal([stats.open, stats.started], [0, 1]);
});

test.run();
