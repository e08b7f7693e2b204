import { COMMON_OPTIONS, parseCommandLine, UsageError, versionText } from '../verdict/commandLine.js';
import { DEFAULT_SERVER_URL, openApiText } from '../tools/openapi/index.js';
import { packageLimits } from '../domain/limits.js';

const HELP = `Usage: unified-ai-mock openapi [--server-url URL]

Prints the OpenAPI 3.1 document of the mock (JSON) to stdout, e.g.
  unified-ai-mock openapi > openapi.json
A running mock serves the same document at /openapi.json.

Options:
  --server-url URL   the server the document names (default: ${DEFAULT_SERVER_URL})
  -h, --help         show this help
  -v, --version      print the version
`;

/** `unified-ai-mock openapi`: writes the document to stdout; resolves to the exit code once it is written. */
export async function openapi(argv: string[]): Promise<number> {
  const { values } = parseCommandLine({
    args: argv,
    strict: true,
    options: { 'server-url': { type: 'string' }, ...COMMON_OPTIONS },
  });
  if (values.help || values.version) {
    process.stdout.write(values.help ? HELP : versionText());
    return 0;
  }
  const url = values['server-url'];
  if (url !== undefined && !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(url))
    throw new UsageError(`--server-url must be an http(s) URL, got '${url}'`);
  // Waits for the write: the caller exits right after, and a pipe may still be draining. A reader that stopped early
  // (`openapi | head`) is no failure of this command.
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(openApiText(url?.replace(/\/$/, '') ?? DEFAULT_SERVER_URL, packageLimits()), (err) =>
      err && (err as NodeJS.ErrnoException).code !== 'EPIPE' ? reject(err) : resolve(),
    ),
  );
  return 0;
}
