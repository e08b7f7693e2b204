/**
 * aimock (@copilotkit/aimock), started programmatically for the benchmark: an OpenAI-compatible mock
 * that answers the bench's chat request from one fixture. It serves its own paths (/v1/chat/completions),
 * checks no key (a bad key gets a 200) and validates no body (an invalid message gets 404, no fixture
 * matched). It logs at `info`, its CLI's default.
 *
 * Usage: node aimock.mjs   (prints "aimock listening on URL")
 */
import { LLMock } from '@copilotkit/aimock';

async function main(): Promise<void> {
  const mock = new LLMock({ port: 0, host: '127.0.0.1', logLevel: 'info' });
  mock.onMessage(/Say this is a test/, { content: 'This is a test.' });
  const url = await mock.start();
  process.stdout.write(`aimock listening on ${url}\n`);
  process.once('SIGTERM', () => process.exit(0));
}

void main();
