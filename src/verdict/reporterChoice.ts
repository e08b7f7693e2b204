import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { EXIT, oneOf, UsageError, type ArgToken } from './commandLine.js';

/** A reporter asked for on the command line, and the file it writes (else standard output). */
export interface ReporterChoice<Name extends string> {
  name: Name;
  output?: string;
}

/**
 * The reporters a command line asks for, read from parseArgs tokens (the conformance runner and
 * client-check share these rules): each --output belongs to the --reporter given just before it;
 * when every reporter writes a file, pretty keeps standard output; at most one reporter writes there.
 */
export function reporterChoices<Name extends string>(
  tokens: readonly ArgToken[],
  names: readonly ('pretty' | Name)[],
): ReporterChoice<'pretty' | Name>[] {
  const reporters: ReporterChoice<'pretty' | Name>[] = [];
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    if (t.name === 'reporter') reporters.push({ name: oneOf('reporter', t.value, names, 'pretty') });
    if (t.name === 'output') {
      const last = reporters[reporters.length - 1];
      if (!last || last.output !== undefined) throw new UsageError('--output must follow the --reporter it is for');
      last.output = t.value;
    }
  }
  if (!reporters.some((r) => r.output === undefined)) reporters.unshift({ name: 'pretty' });
  if (reporters.filter((r) => r.output === undefined).length > 1)
    throw new UsageError('only one reporter can write to standard output; give the others an --output FILE');
  return reporters;
}

/** A finished run: what the reporters knew before the first result, every result, and the counts. */
export interface RunReport<Info, Result, Summary> {
  readonly info: Info;
  readonly results: readonly Result[];
  readonly summary: Summary;
}

/** Receives a run as it happens and renders it: the shape of the conformance runner's reporters and client-check's. */
export interface Reporter<Info, Result, Summary> {
  start?(info: Info): void;
  result?(r: Result, done: number, total: number): void;
  /** The reporter's document (or, for a streaming reporter, what is left to write). */
  end(report: RunReport<Info, Result, Summary>): string;
}

/**
 * The reporters chosen on the command line, each writing to standard output or to its --output
 * file. What goes to a file is kept until `finish`, so a run that stops early writes no file.
 * The text is written as the reporter made it: secrets are masked in the values a reporter is
 * given, never in its serialised text, whose syntax (an element name, a JSON key) a mask would break.
 */
export function openReporters<Name extends string, Info, Result, Summary extends { readonly failed: number }>(
  choices: readonly ReporterChoice<Name>[],
  make: Record<Name, (write: (text: string) => void) => Reporter<Info, Result, Summary>>,
  stdout: (text: string) => void,
) {
  const files = new Map<string, string>();
  const open = choices.map(({ name, output }) => {
    const write = output === undefined ? stdout : (t: string) => files.set(output, (files.get(output) ?? '') + t);
    return { reporter: make[name](write), write };
  });
  return {
    start(info: Info): void {
      for (const { reporter } of open) reporter.start?.(info);
    },
    result(r: Result, done: number, total: number): void {
      for (const { reporter } of open) reporter.result?.(r, done, total);
    },
    /** Writes each reporter's end, then the files (making their folders); returns the exit code: 1 when anything
     * failed, else 0. */
    finish(report: RunReport<Info, Result, Summary>): 0 | 1 {
      for (const { reporter, write } of open) write(reporter.end(report));
      for (const [file, text] of files) {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text);
      }
      return report.summary.failed ? EXIT.failed : EXIT.ok;
    },
  };
}
