// The HTML report's page: its style and script, inlined into every report (no file, font or script is fetched, and
// the page's Content-Security-Policy allows these two by their hashes and nothing else). The script renders the JSON
// report embedded in the page with textContent only, so nothing a target said is ever parsed as HTML. Plain ES2020
// with no template literals, kept as text: it runs in the browser, not in Node.

/** The page's stylesheet. */
export const PAGE_STYLE = String.raw`
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #59636e; --bg: #fff; --panel: #f6f8fa; --line: #d1d9e0;
  --pass: #1a7f37; --fail: #cf222e; --warn: #9a6700; --other: #59636e; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #151b23;
  --line: #3d444d; --pass: #3fb950; --fail: #f85149; --warn: #d29922; --other: #9198a1; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
  background: var(--bg); }
main { max-width: 1400px; margin: 0 auto; padding: 16px 20px 48px; }
h1 { font-size: 20px; margin: 0 0 4px; word-break: break-all; }
h2 { font-size: 15px; margin: 20px 0 8px; }
.meta { color: var(--muted); margin: 0 0 12px; }
.meta span + span::before { content: " · "; }
.cards { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; background: var(--panel); min-width: 110px;
  font: inherit; color: inherit; text-align: left; cursor: pointer; }
.card b { display: block; font-size: 20px; }
.card.v-fail b { color: var(--fail); } .card.v-pass b { color: var(--pass); } .card.v-warn b { color: var(--warn); }
table { border-collapse: collapse; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.filters { display: flex; flex-wrap: wrap; gap: 12px; align-items: end; margin: 16px 0 8px; padding: 10px;
  border: 1px solid var(--line); border-radius: 6px; background: var(--panel); }
.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
.filters select, .filters input { font: inherit; padding: 3px 6px; min-width: 160px; }
.shown { color: var(--muted); margin: 4px 0 8px; }
details.case { border: 1px solid var(--line); border-left-width: 4px; border-radius: 6px; margin: 6px 0; }
details.case > summary { cursor: pointer; padding: 6px 10px; list-style-position: inside; }
details.case > .body { padding: 4px 12px 12px; border-top: 1px solid var(--line); }
.v-fail { border-left-color: var(--fail); } .v-pass { border-left-color: var(--pass); }
.v-warn { border-left-color: var(--warn); } .v-inconclusive, .v-not-applicable { border-left-color: var(--other); }
.badge { display: inline-block; min-width: 94px; font-size: 12px; font-weight: 600; text-transform: uppercase; }
.badge.v-fail { color: var(--fail); } .badge.v-pass { color: var(--pass); } .badge.v-warn { color: var(--warn); }
.badge.v-inconclusive, .badge.v-not-applicable { color: var(--other); }
.id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.desc { color: var(--muted); }
.tag { font-size: 11px; border: 1px solid var(--line); border-radius: 10px; padding: 0 6px; margin-left: 6px;
  color: var(--muted); }
.rule { margin: 8px 0; }
.rule b { font-weight: 600; }
.exchange { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 10px; margin-top: 10px; }
.side { border: 1px solid var(--line); border-radius: 6px; background: var(--panel); min-width: 0; }
.side h3 { font-size: 13px; margin: 0; padding: 6px 10px; border-bottom: 1px solid var(--line); }
pre { margin: 0; padding: 8px 10px; white-space: pre-wrap; word-break: break-all;
  font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.head { border-bottom: 1px dashed var(--line); }
.note { padding: 6px 10px; color: var(--warn); }
.empty { color: var(--muted); font-style: italic; }
`;

/** The page's script: reads the embedded report and renders it, the filters included. */
export const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var app = document.getElementById('app');
  var VERDICTS = ['fail', 'warn', 'inconclusive', 'not-applicable', 'pass'];
  var NAMES = { fail: 'failed', warn: 'warning', inconclusive: 'inconclusive', 'not-applicable': 'not applicable',
    pass: 'passed' };
  var COUNTS = { fail: 'failed', warn: 'warnings', inconclusive: 'inconclusive', 'not-applicable': 'notApplicable',
    pass: 'passed' };

  function el(tag, props, children) {
    var node = document.createElement(tag);
    if (props) for (var k in props) {
      if (k === 'text') node.textContent = props[k];
      else if (k === 'className') node.className = props[k];
      else node.setAttribute(k, props[k]);
    }
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  }
  function pretty(value) {
    if (value === undefined) return '';
    if (typeof value !== 'string') return JSON.stringify(value, null, 2);
    var t = value.trim();
    if (t.charAt(0) === '{' || t.charAt(0) === '[') {
      try { return JSON.stringify(JSON.parse(t), null, 2); } catch (e) { return value; }
    }
    return value;
  }
  function headerLines(headers) {
    return Object.keys(headers || {}).map(function (k) { return k + ': ' + headers[k]; }).join('\n');
  }
  function units(c) {
    var parts = [];
    if (c.tokens) parts.push(c.tokens + ' chat tokens');
    if (c.images) parts.push(c.images + ' images');
    if (c.videoSeconds) parts.push(c.videoSeconds + ' video seconds');
    if (c.characters) parts.push(c.characters + ' TTS characters');
    return parts.length ? parts.join(', ') : 'nothing';
  }

  var s = data.summary;
  document.title = 'Conformance of ' + data.target + ': ' + s.failed + ' failed, ' + s.passed + ' passed';
  app.appendChild(el('h1', { text: 'Conformance of ' + data.target }));
  var meta = el('p', { className: 'meta' }, [
    el('span', { text: data.profile + ' profile' }),
    el('span', { text: s.total + ' cases in ' + (s.ms / 1000).toFixed(1) + ' s' }),
    el('span', { text: s.billable + ' billable sent, paid units: ' + units(s.cost) }),
    el('span', { text: 'fault headers: ' + (data.faultHeaders === null ? 'not probed' : data.faultHeaders ? 'supported' : 'not supported') }),
    data.baseline ? el('span', { text: 'baseline ' + data.baseline.url + ': ' + data.baseline.departedCases + ' cases depart' }) : null,
  ]);
  app.appendChild(meta);

  // The filters; a card of the summary sets the verdict filter.
  var filters = { op: '', verdict: '', level: '', text: '' };
  function select(name, label, options) {
    var node = el('select', { id: 'filter-' + name, 'aria-label': label });
    options.forEach(function (o) { node.appendChild(el('option', { value: o[0], text: o[1] })); });
    node.addEventListener('change', function () { filters[name] = node.value; apply(); });
    return el('label', null, [label, node]);
  }

  app.appendChild(el('h2', { text: 'Summary' }));
  var cards = el('div', { className: 'cards' });
  VERDICTS.forEach(function (v) {
    var card = el('button', { type: 'button', className: 'card v-' + v, 'data-verdict': v }, [
      el('b', { text: String(s[COUNTS[v]]) }), NAMES[v],
    ]);
    card.addEventListener('click', function () { setFilter('verdict', filters.verdict === v ? '' : v); });
    cards.appendChild(card);
  });
  app.appendChild(cards);

  app.appendChild(el('h2', { text: 'Levels' }));
  var levels = el('table', { id: 'levels' });
  levels.appendChild(el('tr', null, [el('th', { text: 'level' })].concat(VERDICTS.map(function (v) {
    return el('th', { text: NAMES[v] });
  })).concat([el('th', { text: 'cases' })])));
  ['must', 'should'].forEach(function (level) {
    var of = data.cases.filter(function (c) { return c.level === level; });
    levels.appendChild(el('tr', { 'data-level': level }, [el('td', { text: level })].concat(VERDICTS.map(function (v) {
      return el('td', { className: 'n', text: String(of.filter(function (c) { return c.verdict === v; }).length) });
    })).concat([el('td', { className: 'n', text: String(of.length) })])));
  });
  app.appendChild(levels);

  var operations = [];
  data.cases.forEach(function (c) { if (operations.indexOf(c.operation) < 0) operations.push(c.operation); });
  var search = el('input', { id: 'filter-text', type: 'search', placeholder: 'case id or words', 'aria-label': 'search' });
  search.addEventListener('input', function () { filters.text = search.value.toLowerCase(); apply(); });
  app.appendChild(el('div', { className: 'filters' }, [
    select('op', 'operation', [['', 'every operation']].concat(operations.map(function (o) { return [o, o]; }))),
    select('verdict', 'verdict', [['', 'every verdict']].concat(VERDICTS.map(function (v) { return [v, NAMES[v]]; }))),
    select('level', 'level', [['', 'every level'], ['must', 'must'], ['should', 'should']]),
    el('label', null, ['search', search]),
  ]));
  var shown = el('p', { className: 'shown', id: 'shown' });
  app.appendChild(shown);

  function exchangeSide(title, lines, head, body, notes) {
    var side = el('div', { className: 'side' }, [el('h3', { text: title })]);
    side.appendChild(el('pre', { className: 'head', text: [lines].concat(head ? [head] : []).join('\n') }));
    (notes || []).forEach(function (n) { if (n) side.appendChild(el('div', { className: 'note', text: n })); });
    side.appendChild(body ? el('pre', { className: 'body', text: body }) : el('pre', { className: 'empty', text: '(no body)' }));
    return side;
  }
  function answerSide(title, a) {
    if (!a) return el('div', { className: 'side' }, [el('h3', { text: title }), el('pre', { className: 'empty', text: '(not sent)' })]);
    return exchangeSide(title, a.status ? 'status ' + a.status : 'no answer', headerLines(a.headers), pretty(a.body),
      [a.error ? 'error: ' + a.error : '', a.incomplete || '']);
  }
  function table(heads, rows) {
    var t = el('table', null, [el('tr', null, heads.map(function (h) { return el('th', { text: h }); }))]);
    rows.forEach(function (r) { t.appendChild(el('tr', null, r.map(function (x) { return el('td', null, [el('pre', { text: x })]); }))); });
    return t;
  }
  function detail(c) {
    var body = el('div', { className: 'body' });
    body.appendChild(el('p', { className: 'rule' }, [el('b', { text: c.level === 'should' ? 'Should (a shape the document describes): ' : 'Rule: ' }), c.rule]));
    if (c.reason) body.appendChild(el('p', { className: 'reason', text: 'Why: ' + c.reason }));
    body.appendChild(el('p', { className: 'expected', text: 'Expected: status ' + c.expected.status + '; checks: ' + c.expected.checks.join(', ') +
      (c.actual ? '. Got status ' + c.actual.status : '') + '. Attempts: ' + c.attempts + ', ' + c.ms + ' ms' + (c.billable ? ', billable' : '') }));
    if (c.failures.length) body.appendChild(table(['check', 'expected', 'actual'], c.failures.map(function (f) { return [f.check, f.expected, f.actual]; })));
    if (c.departures && c.departures.length)
      body.appendChild(el('div', { className: 'departures' }, [el('h3', { text: 'Departs from the baseline' }),
        table(['what', 'target', 'baseline'], c.departures.map(function (d) { return [d.what, d.target, d.baseline]; }))]));
    var r = c.request;
    var grid = el('div', { className: 'exchange' }, [
      exchangeSide('Request sent', r.method + ' ' + r.url, headerLines(r.headers), pretty(r.body)),
      answerSide('Answer got', c.response),
    ]);
    if (data.baseline) grid.appendChild(answerSide('Baseline answer', c.baselineResponse));
    body.appendChild(grid);
    return body;
  }

  var ordered = data.cases.map(function (c, i) { return { c: c, i: i }; });
  ordered.sort(function (a, b) { return VERDICTS.indexOf(a.c.verdict) - VERDICTS.indexOf(b.c.verdict) || a.i - b.i; });
  var list = el('div', { id: 'cases' });
  var rows = ordered.map(function (o) {
    var c = o.c;
    var node = el('details', { className: 'case v-' + c.verdict, id: 'case-' + o.i, 'data-id': c.id, 'data-op': c.operation,
      'data-verdict': c.verdict, 'data-level': c.level });
    node.appendChild(el('summary', null, [
      el('span', { className: 'badge v-' + c.verdict, text: NAMES[c.verdict] }),
      el('span', { className: 'id', text: c.id }), ' ', el('span', { className: 'desc', text: c.description }),
      el('span', { className: 'tag', text: c.operation }), el('span', { className: 'tag', text: c.level }),
    ]));
    var rendered = false;
    function render() { if (!rendered) { rendered = true; node.appendChild(detail(c)); } }
    node.addEventListener('toggle', function () { if (node.open) render(); });
    if (c.verdict === 'fail' || c.verdict === 'warn') { render(); node.open = true; }
    list.appendChild(node);
    return { node: node, c: c, words: (c.id + ' ' + c.description + ' ' + c.rule).toLowerCase() };
  });
  app.appendChild(list);

  function apply() {
    var n = 0;
    rows.forEach(function (row) {
      var c = row.c;
      var show = (!filters.op || c.operation === filters.op) && (!filters.verdict || c.verdict === filters.verdict) &&
        (!filters.level || c.level === filters.level) && (!filters.text || row.words.indexOf(filters.text) >= 0);
      row.node.hidden = !show;
      if (show) n++;
    });
    shown.textContent = 'Showing ' + n + ' of ' + rows.length + ' cases';
    var hash = ['op', 'verdict', 'level'].filter(function (k) { return filters[k]; })
      .map(function (k) { return k + '=' + encodeURIComponent(filters[k]); }).join('&');
    try { history.replaceState(null, '', hash ? '#' + hash : location.pathname + location.search); } catch (e) { /* a sandboxed frame */ }
  }
  function setFilter(name, value) {
    filters[name] = value;
    var node = document.getElementById('filter-' + name);
    if (node) node.value = value;
    apply();
  }
  // The filters a link carries: #verdict=fail&op=chat.completions.
  location.hash.slice(1).split('&').forEach(function (pair) {
    var at = pair.indexOf('=');
    if (at < 0) return;
    var k = pair.slice(0, at);
    var v;
    try { v = decodeURIComponent(pair.slice(at + 1)); } catch (e) { return; }
    var node = document.getElementById('filter-' + k);
    if (node && ['op', 'verdict', 'level'].indexOf(k) >= 0 && [].some.call(node.options, function (o) { return o.value === v; })) {
      filters[k] = v;
      node.value = v;
    }
  });
  apply();
  document.documentElement.setAttribute('data-ready', 'true');
})();
`;
