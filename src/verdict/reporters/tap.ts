import { countsLine, requestLines, type Report, type Reporter } from '../report.js';

// YAML block scalars hold any text; indentation keeps it inside the diagnostic block.
const block = (text: string, indent: string) =>
  `|-\n${text
    .split('\n')
    .map((l) => `${indent}${l}`)
    .join('\n')}`;
const directive = (s: string) => s.replace(/[#\n\\]/g, ' ');

/** TAP version 13: a plan line, one test point per case, YAML diagnostics for failures and warnings (`ok`, severity:
 * warning); inconclusive and not applicable are SKIP. */
export function tapReporter(): Reporter {
  return {
    end({ results, summary }: Report) {
      const out = ['TAP version 13', `1..${results.length}`];
      results.forEach((r, i) => {
        const name = `${r.case.id} - ${directive(r.case.description)}`;
        if (r.verdict === 'pass') out.push(`ok ${i + 1} - ${name}`);
        else if (r.verdict !== 'fail' && r.verdict !== 'warn')
          out.push(`ok ${i + 1} - ${name} # SKIP ${r.verdict}: ${directive(r.reason ?? '')}`);
        else {
          // A warning is a test point that passes, its departure in the diagnostics (TODO would say it is expected to
          // fail).
          const warned = r.verdict === 'warn';
          out.push(`${warned ? 'ok' : 'not ok'} ${i + 1} - ${name}`, '  ---');
          if (warned) out.push('  severity: warning', '  level: should');
          out.push(
            `  rule: ${JSON.stringify(r.case.rule)}`,
            `  request: ${block(requestLines(r).join('\n'), '    ')}`,
            '  failures:',
          );
          for (const f of r.failures)
            out.push(
              `    - check: ${f.check}`,
              `      expected: ${JSON.stringify(f.expected)}`,
              `      actual: ${JSON.stringify(f.actual)}`,
            );
          out.push('  ...');
        }
      });
      out.push(`# ${countsLine(summary)}`, '');
      return out.join('\n');
    },
  };
}
