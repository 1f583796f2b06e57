// candor page (DESIGN §8). Plain DOM: every element is made with
// createElement and every text set with textContent, so nothing a question,
// an answer or a document says is ever parsed as markup.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const form = $('ask-form');
  const input = $('question');
  const button = $('ask-button');
  const result = $('result');
  let inFlight = null;

  /** Creates an element with a class and text (both optional). */
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function append(parent, ...children) {
    for (const c of children) if (c) parent.appendChild(c);
    return parent;
  }

  /** A paragraph "label: value" with the label in bold. */
  function field(label, value, className) {
    const p = el('p', className || 'why');
    append(p, el('strong', null, label + ': '), document.createTextNode(String(value)));
    return p;
  }

  function clearResult() {
    while (result.lastChild && result.lastChild.id !== 'result-heading')
      result.removeChild(result.lastChild);
  }

  // -- banner and demo chips ---------------------------------------------------

  async function loadHealth() {
    try {
      const r = await fetch('/health', { headers: { Accept: 'application/json' } });
      if (!r.ok) return;
      const h = await r.json();
      const banner = $('banner');
      if (h.provider === 'fake' || h.costIsFictional) {
        banner.textContent = 'Scripted provider: answers come from recorded '
          + 'fixtures, not a live model, and every cost shown is fictional.';
        banner.hidden = false;
      } else if (h.provider === 'local') {
        banner.textContent = 'Local provider: no language model is configured. '
          + 'Documents questions are answered by quoting the sentence of the '
          + 'documents that states the answer, or refused; questions about '
          + 'the sales data need a model endpoint.';
        banner.hidden = false;
      } else {
        banner.textContent = 'Provider: ' + h.provider
          + (Array.isArray(h.models) ? ' (' + h.models.join(', ') + ')' : '');
        banner.hidden = false;
      }
    } catch (e) {
      // The page still works without the banner.
    }
  }

  async function loadDemo() {
    try {
      const r = await fetch('/demo/questions', { headers: { Accept: 'application/json' } });
      if (!r.ok) return;
      const d = await r.json();
      const list = $('demo');
      // The local samples say what to expect; the scripted ones what they show.
      const hints = {
        docs: 'answered from the documents',
        refusal: 'refused: the documents do not say',
        out_of_scope: 'refused: out of scope',
      };
      for (const item of d.questions || []) {
        const b = el('button', 'chip', item.question);
        b.type = 'button';
        if (item.shows) b.title = (item.kind ? 'Expect ' : 'Shows ') + item.shows;
        if (hints[item.kind]) append(b, el('span', 'hint', hints[item.kind]));
        b.addEventListener('click', () => { input.value = item.question; ask(item.question); });
        append(list, append(el('li'), b));
      }
    } catch (e) {
      // No chips; the question box still works.
    }
  }

  // -- asking ------------------------------------------------------------------

  async function ask(question) {
    question = question.trim();
    if (question.length < 3) {
      // The server would answer 400; say so here without asking.
      clearResult();
      const p = el('p', 'error', 'A question needs at least 3 characters.');
      p.id = 'error';
      append(result, p);
      return;
    }
    const url = new URL(window.location.href);
    url.searchParams.set('q', question);
    window.history.replaceState(null, '', url.pathname + url.search);
    if (inFlight) inFlight.abort();
    const ctrl = new AbortController();
    inFlight = ctrl;
    clearResult();
    result.setAttribute('aria-busy', 'true');
    button.disabled = true;
    const progress = el('ol', 'progress');
    progress.id = 'progress';
    append(result, asked(question), el('p', 'why', 'Asking…'), progress);
    try {
      const streaming = canStream();
      const r = await fetch('/ask', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: streaming ? 'text/event-stream' : 'application/json',
        },
        body: JSON.stringify({ question: question }),
        signal: ctrl.signal,
      });
      let status = r.status;
      let body;
      const type = r.headers.get('Content-Type') || '';
      if (streaming && r.ok && type.startsWith('text/event-stream')) {
        // Steps as they finish, then `result` (200) or `error`.
        const last = await readEvents(r, (name, data) => {
          if (ctrl === inFlight) append(progress, el('li', 'stage', stageText(name, data)));
        });
        body = last ? last.data : null;
        if (!last || last.name !== 'result') status = errorStatus(body);
      } else {
        body = await r.json();
      }
      if (ctrl !== inFlight) return;
      clearResult();
      append(result, asked(question));
      if (status >= 200 && status < 300) renderAnswer(body);
      else renderError(status, body);
    } catch (e) {
      if (ctrl !== inFlight) return;
      clearResult();
      append(result, asked(question), el('p', 'error', 'The request failed: ' + e.message));
    } finally {
      if (ctrl === inFlight) {
        inFlight = null;
        button.disabled = false;
        result.setAttribute('aria-busy', 'false');
      }
    }
  }

  // -- the event stream of POST /ask ------------------------------------------

  /**
   * Whether to ask for the event stream: the browser can read a response
   * body as it arrives, and the page was not opened with ?stream=0 (plain
   * POST, e.g. for a headless browser whose virtual clock does not wait for
   * a streamed body).
   */
  function canStream() {
    if (new URLSearchParams(window.location.search).get('stream') === '0') return false;
    return typeof ReadableStream === 'function' && typeof TextDecoder === 'function'
      && typeof Response === 'function' && 'body' in Response.prototype;
  }

  /**
   * Reads Server-Sent Events from a fetch response; `onStep(name, data)`
   * for each progress event. Returns the last `result` or `error` event
   * ({name, data}), or null when the stream ended without one.
   */
  async function readEvents(response, onStep) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let last = null;
    const frame = (text) => {
      let name = 'message';
      const lines = [];
      for (const line of text.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) lines.push(line.slice(5).replace(/^ /, ''));
      }
      let data = null;
      try { data = JSON.parse(lines.join('\n')); } catch (e) { return; }
      if (name === 'result' || name === 'error') last = { name: name, data: data };
      else onStep(name, data);
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        frame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
    return last;
  }

  /** One line of the progress list for a step. */
  function stageText(name, d) {
    d = d || {};
    switch (name) {
      case 'route': return 'Route: ' + d.route + (d.routeReason ? ' (' + d.routeReason + ')' : '');
      case 'retrieval': return 'Retrieved ' + (d.chunks ? d.chunks.length : 0) + ' passage(s)';
      case 'sql': return 'SQL ' + d.verdict + (d.layer ? ' by ' + d.layer : '');
      case 'rows': return 'Query returned ' + d.rowCount + ' row(s)';
      case 'answer': return 'Answer: ' + d.status;
      default: return name;
    }
  }

  /** The HTTP status an `error` event's code stands for (as a plain POST). */
  function errorStatus(body) {
    const codes = { fixture_missing: 422, llm_unavailable: 503, overloaded: 503,
      shutting_down: 503, sql_executor_failed: 503, timeout: 504 };
    return (body && codes[body.error]) || 500;
  }

  function asked(question) {
    const p = el('p', 'asked');
    p.id = 'asked';
    append(p, document.createTextNode('You asked: '), el('q', null, question));
    return p;
  }

  function renderError(code, body) {
    const box = el('div', 'error-box');
    box.id = 'error';
    append(box,
      append(el('p'), el('span', 'status status-error', 'error ' + code)),
      el('p', 'error', (body && body.error ? body.error + ': ' : '') + (body && body.message ? body.message : '')));
    // A 400 names each field that failed validation and why.
    if (body && Array.isArray(body.issues) && body.issues.length) {
      const list = el('ul', 'issues');
      list.id = 'issues';
      for (const i of body.issues)
        append(list, el('li', 'issue', String(i && i.path || '(body)') + ': ' + String(i && i.message || '')));
      append(box, list);
    }
    if (body && body.requestId) append(box, field('Request id', body.requestId));
    append(result, box);
  }

  function renderAnswer(a) {
    const status = String(a.status || 'error');
    const head = el('p', 'status-line');
    const badge = el('span', 'status status-' + status.replace(/[^a-z_]/g, ''), status);
    badge.id = 'status';
    append(head, badge);
    if (a.blockedBy) append(head, document.createTextNode(' by ' + a.blockedBy));
    if (a.route) append(head, document.createTextNode(' · route: ' + a.route));
    append(result, head);

    const answer = el('p', 'answer', a.answer || '');
    answer.id = 'answer';
    append(result, answer);
    if (a.routeReason) append(result, field('Why this route', a.routeReason));
    if (a.guardrail && a.guardrail.reasons && a.guardrail.reasons.length)
      append(result, field('Guardrail (' + (a.guardrail.layer || a.guardrail.verdict) + ')',
                           a.guardrail.reasons.join(', ')));
    if (a.warnings && a.warnings.length) append(result, field('Warnings', a.warnings.join(', ')));

    renderCitations(a.citations || []);
    if (a.sql) renderSql(a.sql);
    renderFollowUps(a.followUpQuestions || []);
    if (a.meta) renderMeta(a.meta);
  }

  function renderCitations(citations) {
    if (!citations.length) return;
    append(result, el('h3', null, 'Sources'));
    const list = el('ol', 'citations');
    list.id = 'citations';
    for (const c of citations) {
      const li = el('li', 'citation');
      append(li,
        el('strong', 'doc-title', c.docTitle),
        document.createTextNode(' — '),
        el('span', 'heading', c.heading),
        el('span', 'score', ' (score ' + Number(c.score).toFixed(2)
                              + (c.sanitized ? ', sanitized' : '') + ')'),
        el('p', 'snippet', c.snippet));
      append(list, li);
    }
    append(result, list);
  }

  function renderSql(sql) {
    append(result, el('h3', null, 'SQL'));
    const pre = el('pre', 'sql');
    pre.id = 'sql';
    append(pre, el('code', null, sql.query || ''));
    append(result, pre);
    if (sql.corrections) append(result, field('Corrections', sql.corrections));
    if (sql.lastError) append(result, field('Last error', sql.lastError, 'why error'));
    const columns = sql.columns || [];
    const rows = sql.rows || [];
    if (!columns.length) return;
    const chart = renderChart(columns, rows);
    if (chart) append(result, chart);
    const formats = columns.map((c) => (isMoney(c) ? numberFormat(c) : String));
    const table = el('table', 'data');
    table.id = 'sql-table';
    append(table, el('caption', 'visually-hidden', 'Query result'));
    const thead = el('thead');
    const hr = el('tr');
    for (const c of columns) {
      const th = el('th', null, c);
      th.scope = 'col';
      append(hr, th);
    }
    append(table, append(thead, hr));
    const tbody = el('tbody');
    for (const row of rows) {
      const tr = el('tr', 'data-row');
      row.forEach((v, i) => {
        const num = typeof v === 'number';
        append(tr, el('td', num ? 'num' : null,
                      v === null ? '' : num && formats[i] ? formats[i](v) : v));
      });
      append(tbody, tr);
    }
    append(table, tbody);
    append(result, table);
    append(result, el('p', 'why', (sql.rowCount !== undefined ? sql.rowCount : rows.length) + ' row(s)'
      + (sql.truncated ? ', truncated' : '') + (sql.limitApplied ? ', row limit applied' : '')));
  }

  // -- numbers and charts --------------------------------------------------------
  // A data answer whose rows are a breakdown gets a chart drawn here as SVG,
  // element by element (createElementNS, setAttribute, textContent): no
  // markup is parsed and nothing is styled inline (CSP style-src 'self'), so
  // geometry is in presentation attributes and colours in app.css.

  const SVG_NS = 'http://www.w3.org/2000/svg';
  const LOCALE = document.documentElement.lang || 'en';
  /** More points than this make an unreadable chart: the table suffices. */
  const MAX_POINTS = 40;
  /** Labels of a time series: 'YYYY', 'YYYY-MM', 'YYYY-Qn', 'YYYY-Wnn',
   *  'YYYY-MM-DD'. */
  const PERIODS = [
    /^\d{4}$/,
    /^\d{4}-(0[1-9]|1[0-2])$/,
    /^\d{4}-Q[1-4]$/,
    /^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$/,
    /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/,
  ];
  /** Average width of a 12px label character, to lay out without measuring. */
  const CHAR_W = 7;

  /** Whether a column holds euros: its name ends in _eur or speaks of
   *  revenue, margin or value (but not as a percentage or ratio). */
  function isMoney(column) {
    const c = String(column).toLowerCase();
    if (/(^|_)(pct|percent|share|ratio|rate)(_|$)/.test(c)) return false;
    return /_eur$/.test(c) || /revenue|margin|value/.test(c);
  }

  /** A function formatting the numbers of `column`: euros with cents for
   *  money, otherwise grouped digits. 'tick' is compact for axis ticks
   *  ('€1.5M'), 'label' compact to three digits for value labels ('€1.05M'). */
  function numberFormat(column, compact) {
    const options = isMoney(column)
      ? { style: 'currency', currency: 'EUR' }
      : { maximumFractionDigits: 2 };
    if (compact) {
      options.notation = 'compact';
      options.minimumFractionDigits = 0;
      options.maximumFractionDigits = 1;
      if (compact === 'label') options.maximumSignificantDigits = 3;
    }
    const f = new Intl.NumberFormat(LOCALE, options);
    return (v) => f.format(v);
  }

  /** What to chart from the rows, or null: the first column labels the
   *  points (text categories, or periods), the first all-numeric column
   *  after it gives their values. Null for a single value, no numeric
   *  column, repeated labels (more than one series) or too many points. */
  function chartData(columns, rows) {
    if (columns.length < 2 || rows.length < 2 || rows.length > MAX_POINTS)
      return null;
    const valueIndex = columns.findIndex((c, i) => i > 0 && rows.every(
      (r) => typeof r[i] === 'number' && Number.isFinite(r[i])));
    if (valueIndex < 0) return null;
    let labels = rows.map((r) => r[0]);
    let kind = null;
    if (labels.every((l) => typeof l === 'string' && l.trim() !== '')) {
      const period = PERIODS.find((re) => re.test(labels[0]));
      kind = period && labels.every((l) => period.test(l)) ? 'line' : 'bar';
    } else if (/year/i.test(columns[0])
               && labels.every((l) => Number.isInteger(l) && l >= 1000 && l <= 9999)) {
      kind = 'line';
      labels = labels.map(String);
    }
    if (!kind || new Set(labels).size !== labels.length) return null;
    const points = labels.map((l, i) => ({ label: l, value: rows[i][valueIndex] }));
    // A series reads left to right in time whatever the query's ORDER BY;
    // these period formats sort as text.
    if (kind === 'line') points.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
    return { kind: kind, labelColumn: String(columns[0]),
             valueColumn: String(columns[valueIndex]), points: points };
  }

  /** An SVG element with attributes (numbers rounded to 0.1) and text. */
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const k of Object.keys(attrs || {})) {
      const v = attrs[k];
      node.setAttribute(k, typeof v === 'number' ? String(Math.round(v * 10) / 10) : String(v));
    }
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  /** About `count` round tick values spanning [lo, hi]. */
  function ticks(lo, hi, count) {
    const span = hi - lo || Math.abs(hi) || 1;
    const mag = Math.pow(10, Math.floor(Math.log10(span / count)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= count);
    const out = [];
    const first = Math.floor(lo / step);
    const last = Math.ceil(hi / step);
    for (let i = first; i <= last; ++i) out.push(Number((i * step).toPrecision(12)));
    if (out.length < 2) out.push(Number(((last + 1) * step).toPrecision(12)));
    return out;
  }

  function clip(text, max) {
    return text.length > max ? text.slice(0, max - 1) + '…' : text;
  }

  /** The sentence a screen reader hears for the chart. */
  function describe(d, full) {
    let hi = d.points[0];
    let lo = d.points[0];
    for (const p of d.points) {
      if (p.value > hi.value) hi = p;
      if (p.value < lo.value) lo = p;
    }
    const what = d.kind === 'line'
      ? 'Line chart of ' + d.valueColumn + ' by ' + d.labelColumn + ' from '
        + d.points[0].label + ' to ' + d.points[d.points.length - 1].label
        + ', ' + d.points.length + ' points'
      : 'Bar chart of ' + d.valueColumn + ' by ' + d.labelColumn + ', '
        + d.points.length + ' bars';
    return what + '; highest ' + hi.label + ' (' + full(hi.value) + '), lowest '
      + lo.label + ' (' + full(lo.value) + ').';
  }

  function chartRoot(d, width, height, full) {
    const root = svg('svg', {
      id: 'sql-chart', class: 'chart chart-' + d.kind, role: 'img',
      viewBox: '0 0 ' + width + ' ' + height, width: width, height: height,
      'aria-label': describe(d, full),
    });
    return root;
  }

  /** Horizontal bars, one per category, each with its value at its end. */
  function barChart(d) {
    const full = numberFormat(d.valueColumn);
    const tick = numberFormat(d.valueColumn, 'tick');
    const labels = d.points.map((p) => clip(p.label, 26));
    const values = d.points.map((p) => full(p.value));
    const labelW = Math.min(190, Math.max(60, 10 + CHAR_W * Math.max(
      d.labelColumn.length, ...labels.map((l) => l.length))));
    const valueW = 10 + CHAR_W * Math.max(...values.map((v) => v.length));
    const width = 640;
    const row = 26;
    const top = 24;
    const plotH = row * d.points.length;
    const height = top + plotH + 44;
    const lo = Math.min(0, ...d.points.map((p) => p.value));
    const hi = Math.max(0, ...d.points.map((p) => p.value));
    const t = ticks(lo, hi, 5);
    const x0 = labelW;
    const x1 = width - valueW;
    const x = (v) => x0 + (v - t[0]) / (t[t.length - 1] - t[0]) * (x1 - x0);
    const root = chartRoot(d, width, height, full);
    append(root, svg('title', null, describe(d, full)));
    const grid = svg('g', { class: 'grid' });
    for (const v of t) {
      append(grid, svg('line', { x1: x(v), x2: x(v), y1: top, y2: top + plotH }));
      append(root, svg('text', { class: 'tick', x: x(v), y: top + plotH + 16,
                                 'text-anchor': 'middle' }, tick(v)));
    }
    append(root, grid);
    append(root, svg('text', { class: 'axis-title', x: x0 - 8, y: top - 8,
                               'text-anchor': 'end' }, d.labelColumn));
    append(root, svg('text', { class: 'axis-title', x: (x0 + x1) / 2, y: height - 6,
                               'text-anchor': 'middle' }, d.valueColumn));
    d.points.forEach((p, i) => {
      const y = top + i * row;
      const g = svg('g', { class: 'bar-group' });
      append(g, svg('title', null, p.label + ': ' + values[i]));
      append(g, svg('text', { class: 'category', x: x0 - 8, y: y + row / 2,
                              dy: '0.35em', 'text-anchor': 'end' }, labels[i]));
      const a = x(Math.min(0, p.value));
      const b = x(Math.max(0, p.value));
      append(g, svg('rect', { class: 'bar', x: a, y: y + 4, width: Math.max(b - a, 1),
                              height: row - 8, fill: '#23539a' }));
      const end = p.value < 0 ? a - 4 : b + 4;
      append(g, svg('text', { class: 'value', x: end, y: y + row / 2, dy: '0.35em',
                              'text-anchor': p.value < 0 ? 'end' : 'start' }, values[i]));
      append(root, g);
    });
    append(root, svg('line', { class: 'axis', x1: x(0), x2: x(0), y1: top, y2: top + plotH }));
    return root;
  }

  /** A line through the periods in order, a dot per point (with its value
   *  as a tooltip, and as a label when there are few points). */
  function lineChart(d) {
    const full = numberFormat(d.valueColumn);
    const tick = numberFormat(d.valueColumn, 'tick');
    const short = numberFormat(d.valueColumn, 'label');
    const lo = Math.min(0, ...d.points.map((p) => p.value));
    const hi = Math.max(0, ...d.points.map((p) => p.value));
    const t = ticks(lo, hi, 5);
    const width = 640;
    const height = 300;
    const left = Math.max(48, 14 + CHAR_W * Math.max(...t.map((v) => tick(v).length)));
    const right = 24;
    const top = 32;
    const bottom = height - 52;
    const n = d.points.length;
    const x = (i) => left + i * (width - left - right) / (n - 1);
    const y = (v) => bottom - (v - t[0]) / (t[t.length - 1] - t[0]) * (bottom - top);
    const root = chartRoot(d, width, height, full);
    append(root, svg('title', null, describe(d, full)));
    const grid = svg('g', { class: 'grid' });
    for (const v of t) {
      append(grid, svg('line', { x1: left, x2: width - right, y1: y(v), y2: y(v) }));
      append(root, svg('text', { class: 'tick', x: left - 6, y: y(v), dy: '0.35em',
                                 'text-anchor': 'end' }, tick(v)));
    }
    append(root, grid);
    append(root, svg('line', { class: 'axis', x1: left, x2: width - right,
                               y1: y(Math.max(0, t[0])), y2: y(Math.max(0, t[0])) }));
    // Period labels under the axis, thinned so they do not overlap.
    const labelW = CHAR_W * Math.max(...d.points.map((p) => p.label.length)) + 10;
    const every = Math.max(1, Math.ceil(n / Math.floor((width - left - right) / labelW)));
    d.points.forEach((p, i) => {
      if (i % every === 0)
        append(root, svg('text', { class: 'tick', x: x(i), y: bottom + 18,
                                   'text-anchor': 'middle' }, p.label));
    });
    append(root, svg('text', { class: 'axis-title', x: (left + width - right) / 2,
                               y: height - 8, 'text-anchor': 'middle' }, d.labelColumn));
    append(root, svg('text', { class: 'axis-title', x: 4, y: 14 }, d.valueColumn));
    const path = d.points.map((p, i) => (i ? 'L' : 'M') + (Math.round(x(i) * 10) / 10)
                              + ' ' + (Math.round(y(p.value) * 10) / 10)).join(' ');
    append(root, svg('path', { class: 'line', d: path, fill: 'none',
                               stroke: '#23539a', 'stroke-width': 2 }));
    d.points.forEach((p, i) => {
      const g = svg('g', { class: 'point-group' });
      append(g, svg('title', null, p.label + ': ' + full(p.value)));
      append(g, svg('circle', { class: 'point', cx: x(i), cy: y(p.value), r: 4 }));
      // A point lower than its neighbours is labelled below, off the line,
      // unless that would touch the period labels.
      if (n <= 12) {
        const near = d.points.slice(Math.max(0, i - 1), i + 2).map((q) => q.value);
        const below = p.value < near.reduce((a, b) => a + b, 0) / near.length
          && y(p.value) + 18 < bottom - 4;
        append(g, svg('text', { class: 'value', x: x(i), y: y(p.value) + (below ? 18 : -9),
                                'text-anchor': 'middle' }, short(p.value)));
      }
      append(root, g);
    });
    return root;
  }

  /** The chart for a data answer's rows in a figure, or null when the rows
   *  are not a breakdown worth drawing. */
  function renderChart(columns, rows) {
    const d = chartData(columns, rows);
    if (!d) return null;
    const figure = el('figure', 'chart-figure');
    append(figure, d.kind === 'line' ? lineChart(d) : barChart(d),
           el('figcaption', 'why', (d.kind === 'line' ? 'Line chart: ' : 'Bar chart: ')
              + d.valueColumn + ' by ' + d.labelColumn
              + ' (hover a ' + (d.kind === 'line' ? 'point' : 'bar') + ' for its value)'));
    return figure;
  }

  function renderFollowUps(questions) {
    if (!questions.length) return;
    append(result, el('h3', null, 'You could ask'));
    const list = el('ul', 'chips');
    for (const q of questions) {
      const b = el('button', 'chip', q);
      b.type = 'button';
      b.addEventListener('click', () => { input.value = q; ask(q); });
      append(list, append(el('li'), b));
    }
    append(result, list);
  }

  function renderMeta(m) {
    append(result, el('h3', null, 'Trace'));
    const cost = typeof m.costUsd === 'number' ? '$' + m.costUsd.toFixed(6) : 'n/a';
    const tokens = m.tokens ? m.tokens.total : 0;
    append(result, el('p', 'meta',
      'Provider ' + m.provider + (m.models && m.models.length ? ' (' + m.models.join(', ') + ')' : '')
      + ' · ' + m.llmCalls + ' model call(s)' + (m.fallbackUsed ? ', fallback used' : '')
      + ' · ' + tokens + ' tokens · cost ' + cost + (m.costIsFictional ? ' (fictional)' : '')
      + ' · ' + m.latencyMs + ' ms'));
    const trace = m.trace || [];
    if (!trace.length) return;
    const table = el('table', 'trace');
    table.id = 'trace';
    append(table, el('caption', 'visually-hidden', 'Node trace'));
    const hr = el('tr');
    for (const h of ['node', 'outcome', 'time (ms)']) {
      const th = el('th', null, h);
      th.scope = 'col';
      append(hr, th);
    }
    append(table, append(el('thead'), hr));
    const tbody = el('tbody');
    for (const t of trace)
      append(tbody, append(el('tr', 'trace-row'),
        el('td', 'node', t.node), el('td', null, t.outcome),
        el('td', 'num', (Number(t.micros) / 1000).toFixed(3))));
    append(table, tbody);
    append(result, table);
  }

  // -- wiring ------------------------------------------------------------------

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ask(input.value);
  });
  loadHealth();
  loadDemo();
  // A deep link /?q=<question> fills the box and asks.
  const q = new URLSearchParams(window.location.search).get('q');
  if (q) {
    input.value = q;
    ask(q);
  }
})();
