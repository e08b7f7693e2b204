import type { Catalogue } from '../../domain/catalogue.js';
import { parseHeaders, parseRoutes } from './gateway.js';
import { DEFAULT_MAX_BODY_BYTES } from './http.js';
import type { SuiteValues } from './suite.js';
import { COMMON_OPTIONS, listValues, oneOf, parseCommandLine, UsageError } from '../../verdict/commandLine.js';
import { reporterChoices, type ReporterChoice } from '../../verdict/reporterChoice.js';
import type { Profile } from '../../verdict/types.js';

// The defaults of the runner's own options; the models' and voices' come from the catalogue.
const DEFAULTS = { timeoutMs: 60_000, concurrency: 4, retries: 2, imageUrl: 'https://example.com/image.png' } as const;
const MIB = 1024 * 1024;
// What an Authorization header can carry as the key: fetch sends header values as Latin-1 bytes, refuses controls, and
// HTTP strips the blanks at the ends of a value.
const SENDABLE = /^[\x21-\x7e\x80-\xff]([\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/;

type Kind = Parameters<Catalogue['ofKind']>[0];
const firstOf = (catalogue: Catalogue, kind: Kind): string => catalogue.ofKind(kind)[0]!.id;

/** The conformance command's help text, with the defaults the options take from the catalogue. */
export const conformanceHelp = (
  catalogue: Catalogue,
): string => `Usage: unified-ai-mock conformance --base-url URL --api-key KEY [options]

Sends the conformance suite to an implementation of the API and reports, case by case, where it
departs from the API document. A case is a must (a rule the document states) or a should (a
shape it only describes): a departure from a should case is a warning. Exit code: 0 no case
failed (warnings or not), 1 a case failed (or warned, with --strict), 2 bad usage, an unreachable
target or a refused key.

Target:
  --base-url URL          the implementation to check, e.g. https://staging.example.com
  --api-key KEY           a valid key (or set CONFORMANCE_API_KEY); masked in every output
  --path-prefix PREFIX    put before every path, e.g. /v1
  --timeout MS            per request, media downloads included (default: ${DEFAULTS.timeoutMs})
  --concurrency N         requests in flight at once (default: ${DEFAULTS.concurrency})
  --retries N             extra attempts of a free case after a 429 or a transport error
                          (default: ${DEFAULTS.retries})
  --max-body MIB          the most of one response or media file the runner reads
                          (default: ${DEFAULT_MAX_BODY_BYTES / MIB})
  --media-allow-private   fetch media links on loopback and private addresses even when the target
                          is not on one itself (link-local and metadata addresses: never)
  --route OPERATION=PATH  an operation the target serves at another path, e.g.
                          chat.completions=/v1/chat/completions (repeatable)
  --header NAME:VALUE     added to every request to the target, e.g. x-portkey-provider:openai;
                          a value that looks like a secret is masked like the key (repeatable)
  --continue-on-refused-key
                          run the cases even when the target refuses the key on GET /v1/me (401);
                          without it such a run stops at once with exit code 2

Baseline (compare with another implementation):
  --baseline URL          also send every case there and list, case by case, where the target's
                          answer departs from it: status (class; exact for a 4xx), error envelope
                          (type, code, param), retry-after and www-authenticate presence, media
                          type, stream grammar; a departure fails the run (exit 1)
  --baseline-api-key KEY  the baseline's key; masked in every output (default: the --api-key)
  --baseline-report-only  list departures without failing the run on them

What to run:
  --profile NAME          documented: statuses of every rule, limit and auth case of the API
                          document; full: also response shapes, SSE grammar, media bytes, faults;
                          gateway: a gateway checked from both ends, the mock as its upstream
                          (its options: --profile gateway --help) (default: documented)
  --only PATTERN          run only matching cases: a tag (auth, limits, chat, ...), an operation,
                          a case id or id prefix (chat.temperature), or a glob ('*.above-max*');
                          repeatable, or comma-separated
  --skip PATTERN          leave out matching cases (same patterns)
  --skip-billable         leave out every case a correct server does paid work for
  --unsupported NAME      an operation (or tag, e.g. stream) the target does not offer: its cases
                          are not applicable, not failures (repeatable)
  --fault-headers MODE    auto: probe for the mock's Prefer/X-Mock-Fault headers; on; off
                          (default: auto)
  --plan                  print the cases, how many are billable and the paid units; send nothing
  --strict                fail the run on should cases too (a warning is then a failure); not
                          serve's --strict, which refuses unknown body fields

Models and voices (the first of each kind in the mock's catalogue unless given):
  --chat-model ID         chat model (default: ${firstOf(catalogue, 'text')})
  --image-model ID        image model (default: ${firstOf(catalogue, 'image')})
  --image-n-max-1         the image model takes at most n = 1 (the Limits table's rule for the
                          named model); without it the n = 2 case runs only for dall-e-3
  --video-model ID        video model (default: ${firstOf(catalogue, 'video')})
  --voice-id ID           voice-provider voice (default: ${catalogue.voices[0]!.id})
  --cloud-voice NAME      cloud-provider neural voice (default: ${firstOf(catalogue, 'cloud-speech')})
  --tts-model ID          voice-provider model_id, full profile (default: ${firstOf(catalogue, 'voice')})
  --image-url URL         source image for image_to_video (default: ${DEFAULTS.imageUrl})

Reports:
  --reporter NAME         pretty, json, junit, tap or html (repeatable; default: pretty)
  --output FILE           write the reporter named just before it to FILE (else standard output)
  -h, --help              show this help
  -v, --version           print the version

Every option in full, and a CI workflow: docs/conformance.md.
`;

/** Reporter names. */
export type ReporterName = 'pretty' | 'json' | 'junit' | 'tap' | 'html';

/** Everything the conformance command was asked to do. */
export interface ConformanceOptions {
  baseUrl?: string;
  apiKey?: string;
  pathPrefix: string;
  timeoutMs: number;
  concurrency: number;
  retries: number;
  /** The most of one body the runner reads (--max-body, given in MiB). */
  maxBodyBytes: number;
  /** Fetch media links on loopback and private addresses whatever the target's own address. */
  mediaAllowPrivate: boolean;
  /** The path an operation is served at instead of the document's (--route), by operation id. */
  routes: Record<string, string>;
  /** Headers added to every request to the target (--header), by lower-case name. */
  headers: Record<string, string>;
  profile: Profile;
  only: string[];
  skip: string[];
  skipBillable: boolean;
  unsupported: string[];
  faultHeaders: 'auto' | 'on' | 'off';
  plan: boolean;
  /** A departure from a `should` case fails the run (in the documented profile it is otherwise a warning). */
  strict: boolean;
  /** The image model is the one the n <= 1 rule names, whatever its id. */
  imageNMax1: boolean;
  values: SuiteValues;
  reporters: ReporterChoice<ReporterName>[];
  /** The implementation to compare with (--baseline), and its key. */
  baseline?: { url: string; apiKey: string; reportOnly: boolean };
  /** Run the cases even when the target refuses the key on GET /v1/me. */
  continueOnRefusedKey: boolean;
}

const REPORTERS: readonly ReporterName[] = ['pretty', 'json', 'junit', 'tap', 'html'];

function count(flag: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new UsageError(`--${flag} must be a whole number of at least ${min}, got '${value}'`);
  return Number(value);
}

/** Parses the command line of `conformance`; 'help' for --help, 'version' for --version. Throws UsageError on a mistake. */
export function parseConformanceArgs(
  argv: string[],
  catalogue: Catalogue,
  env: NodeJS.ProcessEnv = process.env,
): ConformanceOptions | 'help' | 'version' {
  const S = { type: 'string' } as const;
  const M = { type: 'string', multiple: true } as const;
  const B = { type: 'boolean' } as const;
  const parsed = parseCommandLine({
    args: argv,
    strict: true,
    tokens: true,
    options: {
      'base-url': S,
      'api-key': S,
      baseline: S,
      'baseline-api-key': S,
      'baseline-report-only': B,
      'path-prefix': S,
      'continue-on-refused-key': B,
      timeout: S,
      concurrency: S,
      retries: S,
      'max-body': S,
      'media-allow-private': B,
      route: M,
      header: M,
      profile: S,
      only: M,
      skip: M,
      'skip-billable': B,
      unsupported: M,
      'fault-headers': S,
      plan: B,
      strict: B,
      'image-n-max-1': B,
      'chat-model': S,
      'image-model': S,
      'video-model': S,
      'voice-id': S,
      'cloud-voice': S,
      'tts-model': S,
      'image-url': S,
      reporter: M,
      output: M,
      ...COMMON_OPTIONS,
    },
  });
  const v = parsed.values;
  if (v.help) return 'help';
  if (v.version) return 'version';
  const reporters = reporterChoices(parsed.tokens ?? [], REPORTERS);
  const plan = v.plan ?? false;
  const apiKey = v['api-key'] ?? env.CONFORMANCE_API_KEY;
  if (!plan && !v['base-url']) throw new UsageError('--base-url is required');
  if (!plan && !apiKey) throw new UsageError('--api-key (or CONFORMANCE_API_KEY) is required');
  for (const [flag, key] of [
    ['--api-key', apiKey],
    ['--baseline-api-key', v['baseline-api-key']],
  ] as const)
    if (key && !SENDABLE.test(key))
      throw new UsageError(
        `${flag} must be text an HTTP header can carry: no control character, none past U+00FF, no blank at either end`,
      );
  if (v['base-url'] && !/^https?:\/\/[^/]/.test(v['base-url']))
    throw new UsageError(`--base-url must be an http or https URL, got '${v['base-url']}'`);
  const baseline = v.baseline;
  if (baseline !== undefined && !/^https?:\/\/[^/]/.test(baseline))
    throw new UsageError(`--baseline must be an http or https URL, got '${baseline}'`);
  if (baseline === undefined && (v['baseline-api-key'] !== undefined || v['baseline-report-only']))
    throw new UsageError('--baseline-api-key and --baseline-report-only need --baseline');
  const prefix = v['path-prefix'] ?? '';
  if (prefix && !/^\/[\w./-]*$/.test(prefix))
    throw new UsageError(`--path-prefix must start with '/', got '${prefix}'`);
  const first = (kind: Kind) => firstOf(catalogue, kind);
  return {
    ...(v['base-url'] ? { baseUrl: v['base-url'] } : {}),
    ...(apiKey ? { apiKey } : {}),
    pathPrefix: prefix,
    timeoutMs: count('timeout', v.timeout, DEFAULTS.timeoutMs, 1),
    concurrency: count('concurrency', v.concurrency, DEFAULTS.concurrency, 1),
    retries: count('retries', v.retries, DEFAULTS.retries, 0),
    maxBodyBytes: count('max-body', v['max-body'], DEFAULT_MAX_BODY_BYTES / MIB, 1) * MIB,
    mediaAllowPrivate: v['media-allow-private'] ?? false,
    continueOnRefusedKey: v['continue-on-refused-key'] ?? false,
    routes: parseRoutes(listValues(v.route)),
    headers: parseHeaders(v.header ?? []),
    profile: oneOf('profile', v.profile, ['documented', 'full'] as const, 'documented'),
    only: listValues(v.only),
    skip: listValues(v.skip),
    skipBillable: v['skip-billable'] ?? false,
    unsupported: listValues(v.unsupported),
    faultHeaders: oneOf('fault-headers', v['fault-headers'], ['auto', 'on', 'off'] as const, 'auto'),
    plan,
    strict: v.strict ?? false,
    imageNMax1: v['image-n-max-1'] ?? false,
    values: {
      chatModel: v['chat-model'] ?? first('text'),
      imageModel: v['image-model'] ?? first('image'),
      videoModel: v['video-model'] ?? first('video'),
      voiceId: v['voice-id'] ?? catalogue.voices[0]!.id,
      cloudVoice: v['cloud-voice'] ?? first('cloud-speech'),
      ttsModel: v['tts-model'] ?? first('voice'),
      imageUrl: v['image-url'] ?? DEFAULTS.imageUrl,
    },
    reporters,
    ...(baseline !== undefined
      ? {
          baseline: {
            url: baseline,
            apiKey: v['baseline-api-key'] ?? apiKey ?? '',
            reportOnly: v['baseline-report-only'] ?? false,
          },
        }
      : {}),
  };
}
