import { addCost, formatCost, zeroCost } from '../../verdict/cost.js';
import { notApplicable, orderCases, type Applicability } from './run.js';
import type { Case, Profile } from '../../verdict/types.js';

/** The --plan text: every case in the order it would run with its level, the billable count and the estimated paid
 * units. Sends nothing. */
export function renderPlan(
  cases: readonly Case[],
  profile: Profile,
  filtered: number,
  settings: Applicability & { faultProbe: boolean },
): string {
  const ordered = orderCases(cases);
  const billable = ordered.filter((c) => c.billable);
  const cost = billable.reduce((sum, c) => addCost(sum, c.cost), zeroCost());
  const lines = [
    `Plan (${profile} profile): ${ordered.length} cases, ${ordered.length - billable.length} free, ${billable.length} billable${filtered ? `; ${filtered} left out by --only, --skip or --skip-billable` : ''}`,
    `Estimated paid units if every billable case is sent once: ${formatCost(cost)}`,
    'Free cases (a correct server rejects them before doing paid work) run first; paid cases use the cheapest valid parameters.',
    'Level: must, a rule the API document states (a departure fails); should, a shape it only describes (a departure is a warning, a failure with --strict).',
    '',
  ];
  for (const c of ordered) {
    // Fault cases wait for the run-time probe; anything else that cannot apply is known now.
    const na = c.requires?.faultHeaders && settings.faultProbe ? undefined : notApplicable(c, settings);
    const price = c.billable ? `$ ${formatCost(c.cost)}` : 'free';
    lines.push(
      `  ${c.expect.status}  ${c.level.padEnd(6)} ${c.id.padEnd(52)} ${price.padEnd(22)} ${c.description}${na ? `  [not applicable: ${na}]` : ''}`,
    );
  }
  lines.push('', 'Nothing was sent.', '');
  return lines.join('\n');
}
