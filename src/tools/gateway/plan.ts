// The gateway profile's --plan: every case it would run, with its level, what it needs of the upstream and when it
// runs. Sends nothing.
import { notApplicable } from '../conformance/run.js';
import type { GatewayCase, Phase, Probe } from './cases.js';
import type { GatewayOptions } from './options.js';

const WHEN: Readonly<Record<Phase, string>> = {
  parallel: 'with --concurrency others',
  streams: 'one stream at a time',
  gap: 'alone, the upstream paced with --upstream-gap',
  paced: 'alone, the upstream paced steadily',
  hang: 'last, waiting up to the gateway timeout',
};

/** The --plan text of the gateway profile. */
export function renderGatewayPlan(
  cases: readonly GatewayCase[],
  probes: ReadonlyMap<string, Probe>,
  options: GatewayOptions,
  unsupported: ReadonlySet<string>,
  hangWaitMs: number,
): string {
  const upstream = options.upstream;
  const where = !upstream
    ? 'an upstream given by --upstream-port or --upstream-admin'
    : 'admin' in upstream
      ? `the mock at ${upstream.admin}`
      : `a mock the runner starts on ${upstream.start.host}:${upstream.start.port}`;
  const lines = [
    `Plan (gateway profile): ${cases.length} cases through ${options.conformance.baseUrl ?? 'the gateway (--base-url)'}, with ${where} as its upstream`,
    'Level: must, a rule the API document states (a departure fails); should, gateway practice (a departure is a warning, a failure with --strict).',
    `Bounds: the first event and every later one within ${options.firstEventBoundMs} ms of the upstream writing it (its gap ${options.upstreamGapMs} ms); a hung upstream answered within ${hangWaitMs} ms (the gateway's timeout ${options.gatewayTimeoutMs} ms and its grace).`,
    '',
  ];
  for (const gc of cases) {
    const na = notApplicable(gc.case, { unsupported, faultHeaders: true, imageModel: '' });
    const phase = probes.get(gc.probes[0]!)!.phase;
    lines.push(
      `  ${gc.case.level.padEnd(6)} ${gc.case.id.padEnd(44)} ${gc.case.description}  [${WHEN[phase]}]${na ? `  [not applicable: ${na}]` : ''}`,
    );
  }
  lines.push('', 'Nothing was sent.', '');
  return lines.join('\n');
}
