import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { completionJson, usageOf } from '../../src/text/wire.js';
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

test.run();
