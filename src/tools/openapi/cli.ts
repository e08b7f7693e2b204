import { parseArgs } from 'node:util';
import { ConfigError } from '../../domain/config.js';
import { DEFAULT_SERVER_URL, openApiText } from './index.js';

const HELP = `Usage: unified-ai-mock openapi [--server-url URL]

Prints the OpenAPI 3.1 document of the mock (JSON) to stdout, e.g.
  unified-ai-mock openapi > openapi.json
A running mock serves the same document at /openapi.json.

Options:
  --server-url URL   the server the document names     default ${DEFAULT_SERVER_URL}
  --help             show this help
`;

/** `unified-ai-mock openapi`: writes the document to stdout; resolves to the exit code once it is written. */
export async function openapi(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { 'server-url': { type: 'string' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const url = values['server-url'];
  if (url !== undefined && !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(url))
    throw new ConfigError(`--server-url must be an http(s) URL, got '${url}'`);
  // Waits for the write: the caller exits right after, and a pipe may still be draining.
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(openApiText(url?.replace(/\/$/, '')), (err) => (err ? reject(err) : resolve())),
  );
  return 0;
}
