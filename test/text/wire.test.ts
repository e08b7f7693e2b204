import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { chunkEvents, completionJson, usageOf } from '../../src/text/wire.js';
import type { Completion } from '../../src/text/complete.js';

/** The chat.completion object as the real API writes it, fields in its order: the reference for the text. */
const expected = (
  head: { id: string; created: number; model: string; fingerprint: string },
  result: Completion,
  usage: ReturnType<typeof usageOf>,
) => ({
  id: head.id,
  object: 'chat.completion',
  created: head.created,
  model: head.model,
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: result.content, refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: result.finishReason,
    },
  ],
  usage,
  service_tier: 'default',
  system_fingerprint: head.fingerprint,
});

test('completionJson writes the same bytes as JSON.stringify of the chat.completion object, for any content', () => {
  const text = fc.string({ unit: 'binary' }); // any code points: quotes, backslashes, controls, emoji, lone surrogates
  fc.assert(
    fc.property(
      fc.record({ id: text, created: fc.nat(), model: text, fingerprint: text }),
      text,
      fc.constantFrom('stop' as const, 'length' as const),
      fc.nat({ max: 1_000_000 }),
      fc.nat({ max: 1_000_000 }),
      (head, content, finishReason, prompt, completion) => {
        const result: Completion = { content, finishReason, completionTokens: completion, pieces: [] };
        const usage = usageOf(prompt, completion);
        const json = completionJson(head, result, usage);
        assert.is(json, JSON.stringify(expected(head, result, usage)));
        assert.is(completionJson(head, result, usage), json, 'the same again, from the cached content');
      },
    ),
    { numRuns: 500 },
  );
});

test("chunkEvents: each frame is the bytes of `data: ` + the event's data + a blank line, and the data are chat.completion.chunk objects", () => {
  const text = fc.string({ unit: 'binary' });
  fc.assert(
    fc.property(
      fc.record({ id: text, created: fc.nat(), model: text, fingerprint: text }),
      fc.array(fc.record({ text, tokens: fc.integer({ min: 1, max: 4 }) }), { maxLength: 12 }),
      fc.boolean(),
      (head, pieces, includeUsage) => {
        const content = pieces.map((p) => p.text).join('');
        const result: Completion = { content, finishReason: 'stop', completionTokens: pieces.length, pieces };
        const events = chunkEvents(head, result, usageOf(3, pieces.length), includeUsage);
        assert.is(events.length, pieces.length + (includeUsage ? 3 : 2));
        let streamed = '';
        for (let i = 0; i < events.length; i++) {
          const data = events.data(i);
          const bytes: Buffer[] = [];
          events.frame(i, { put: (b) => void bytes.push(b) });
          const frame = Buffer.concat(bytes);
          assert.ok(frame.equals(Buffer.from(`data: ${data}\n\n`)), `frame ${i}, byte for byte`);
          assert.is(events.chars(i), data.length, `event ${i}'s length, counted without its text`);
          const chunk = JSON.parse(data);
          assert.is(chunk.object, 'chat.completion.chunk');
          assert.is(chunk.id, head.id);
          assert.is('usage' in chunk, includeUsage);
          streamed += chunk.choices[0]?.delta?.content ?? '';
          assert.is(events.tokens(i), i >= 1 && i <= pieces.length ? pieces[i - 1]!.tokens : 0);
        }
        assert.is(streamed, content);
      },
    ),
    { numRuns: 300 },
  );
});

test.run();
