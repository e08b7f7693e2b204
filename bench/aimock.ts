/**
 * aimock (@copilotkit/aimock), started programmatically for the benchmark: an OpenAI-compatible mock
 * that answers the bench's chat request from one fixture. It serves its own paths (/v1/chat/completions),
 * checks no key (a bad key gets a 200) and validates no body (an invalid message gets 404, no fixture
 * matched). It logs at `info`, its CLI's default.
 *
 * With --ttft, --tps and --tokens it also answers the paced-streams scenario's prompt: a reply of `tokens`
 * chunks of one short word each, paced by its `streamingProfile` (the first chunk after ttft ms, each next
 * one 1/tps s after the previous).
 *
 * Usage: node aimock.mjs [--ttft MS --tps N --tokens N]   (prints "aimock listening on URL")
 */
import { parseArgs } from 'node:util';
import { LLMock } from '@copilotkit/aimock';

/** The paced scenario's prompt (bench/paced.ts sends it). */
const PACED_PROMPT = /Please give me a long answer/;
// One token a chunk: a word of four characters and chunks of four characters.
const WORD = ' tok';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { ttft: { type: 'string' }, tps: { type: 'string' }, tokens: { type: 'string' } },
  });
  const mock = new LLMock({ port: 0, host: '127.0.0.1', logLevel: 'info' });
  mock.onMessage(/Say this is a test/, { content: 'This is a test.' });
  if (values.tokens !== undefined)
    mock.onMessage(
      PACED_PROMPT,
      { content: WORD.repeat(Number(values.tokens)) },
      { chunkSize: WORD.length, streamingProfile: { ttft: Number(values.ttft), tps: Number(values.tps) } },
    );
  const url = await mock.start();
  process.stdout.write(`aimock listening on ${url}\n`);
  process.once('SIGTERM', () => process.exit(0));
}

void main();
