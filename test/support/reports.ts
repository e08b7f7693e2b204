// The real parsers the reports are read with in the tests, as a CI system reads them: JUnit against Jenkins' JUnit
// schema by xmllint (Debian's libxml2-utils; .ci/run installs it), TAP by tap-parser (node-tap's TAP 14 parser, in
// strict mode), the JSON report against its published schema (schemas/conformance-report.json) with the project's Ajv.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { Parser, type Result } from 'tap-parser';
import { schemaId, SchemaRegistry } from '../../src/contract/schemas.js';
import { ROOT } from '../../src/lib/paths.js';

/** Jenkins' JUnit schema (see test/support/junit/README.md). */
export const JUNIT_XSD = join(ROOT, 'test', 'support', 'junit', 'junit-10.xsd');

/** xmllint on PATH, or undefined. */
export function findXmllint(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const file = join(dir, 'xmllint');
    if (dir && existsSync(file)) return file;
  }
  return undefined;
}

let told = false;

/**
 * The problems xmllint finds in a JUnit document against Jenkins' schema (well-formedness included): none when it is
 * valid. Undefined when xmllint is missing: then one loud line says what was not checked and how to install it.
 */
export function junitProblems(xml: string): string[] | undefined {
  const xmllint = findXmllint();
  if (!xmllint) {
    if (!told)
      console.log(
        '!!! xmllint is missing: JUnit reports are NOT validated against the JUnit schema (apt-get install -y libxml2-utils)',
      );
    told = true;
    return undefined;
  }
  const run = spawnSync(xmllint, ['--noout', '--nonet', '--schema', JUNIT_XSD, '-'], {
    input: xml,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status === 0) return [];
  return (run.stderr || `xmllint exited ${run.status}`).split('\n').filter((l) => l && !/ validates$/.test(l));
}

/** One `<testcase>` as a CI system reads it. */
export interface JunitTestcase {
  readonly suite: string;
  readonly classname: string;
  readonly name: string;
  readonly failure?: { readonly message: string; readonly type: string; readonly text: string };
  readonly skipped?: { readonly message: string };
  readonly systemOut?: string;
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The testcases of a JUnit document, suite by suite (fast-xml-parser; attribute values and text unescaped). */
export function junitTestcases(xml: string): JunitTestcase[] {
  type Node = Record<string, unknown>;
  const doc = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: false,
    processEntities: true,
    htmlEntities: false,
    isArray: (name) => ['testsuite', 'testcase'].includes(name),
  }).parse(xml) as { testsuites: { testsuite?: Node[] } };
  return asArray(doc.testsuites.testsuite).flatMap((suite) =>
    asArray(suite.testcase as Node[] | undefined).map((t) => {
      const failure = t.failure as Node | undefined;
      const skipped = t.skipped as Node | string | undefined;
      const out = t['system-out'];
      return {
        suite: String(suite.name),
        classname: String(t.classname),
        name: String(t.name),
        ...(failure !== undefined
          ? {
              failure: {
                message: String(failure.message ?? ''),
                type: String(failure.type ?? ''),
                text: String(failure['#text'] ?? ''),
              },
            }
          : {}),
        ...(skipped !== undefined
          ? { skipped: { message: typeof skipped === 'string' ? '' : String(skipped.message ?? '') } }
          : {}),
        ...(out !== undefined ? { systemOut: String(out) } : {}),
      };
    }),
  );
}

/** A TAP document as tap-parser reads it in strict mode: its version, plan, test points and what it could not read. */
export interface TapDocument {
  readonly version?: number;
  readonly plan?: { readonly start: number; readonly end: number };
  readonly points: readonly Result[];
  /** Lines that are not TAP, YAML diagnostics that do not parse, test points out of order or past the plan. */
  readonly problems: readonly string[];
}

export function parseTap(text: string): TapDocument {
  const points: Result[] = [];
  const problems: string[] = [];
  let version: number | undefined;
  let plan: { start: number; end: number } | undefined;
  let complete = false;
  const parser = new Parser({ strict: true });
  parser.on('version', (v: number) => (version = v));
  parser.on('plan', (p: { start: number; end: number }) => (plan = p));
  parser.on('assert', (a: Result) => {
    points.push(a);
    if (a.tapError) problems.push(`test point ${a.id}: ${a.tapError}`);
  });
  parser.on('extra', (line: string) => problems.push(`not TAP: ${JSON.stringify(line)}`));
  parser.on('complete', (r: { failures: { tapError?: string | null; data?: unknown }[] }) => {
    complete = true;
    for (const f of r.failures) if (f.tapError) problems.push(`${f.tapError}: ${JSON.stringify(f.data ?? '')}`);
  });
  parser.end(text);
  if (!complete) problems.push('the parser did not complete');
  return { ...(version !== undefined ? { version } : {}), ...(plan ? { plan } : {}), points, problems };
}

let registry: SchemaRegistry | undefined;

/** The errors of a JSON report against schemas/conformance-report.json, as `path: message` lines (none: valid). */
export function jsonReportProblems(doc: unknown, file = 'conformance-report.json'): string[] {
  registry ??= SchemaRegistry.shared();
  return registry.check(schemaId(file), doc).map((e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`);
}
