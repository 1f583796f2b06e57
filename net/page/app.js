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
    append(result, asked(question), el('p', 'why', 'Asking…'));
    try {
      const r = await fetch('/ask', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ question: question }),
        signal: ctrl.signal,
      });
      const body = await r.json();
      if (ctrl !== inFlight) return;
      clearResult();
      append(result, asked(question));
      if (r.ok) renderAnswer(body);
      else renderError(r.status, body);
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
      for (const v of row)
        append(tr, el('td', typeof v === 'number' ? 'num' : null, v === null ? '' : v));
      append(tbody, tr);
    }
    append(table, tbody);
    append(result, table);
    append(result, el('p', 'why', (sql.rowCount !== undefined ? sql.rowCount : rows.length) + ' row(s)'
      + (sql.truncated ? ', truncated' : '') + (sql.limitApplied ? ', row limit applied' : '')));
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
