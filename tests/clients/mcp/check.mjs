// The official MCP TypeScript SDK client against a running candor (started
// by tests/e2e/mcp.cpp with the local provider, loopback only):
//   node check.mjs http://127.0.0.1:<port>/mcp
// Exits 0 when every check holds; otherwise prints what failed and exits 1.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport }
  from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, McpError }
  from '@modelcontextprotocol/sdk/types.js';

const url = process.argv[2];
if (!url || !/^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(url)) {
  console.error('usage: node check.mjs http://127.0.0.1:<port>/mcp');
  process.exit(2);
}

const failures = [];
function check(ok, what, detail) {
  if (!ok) failures.push(detail === undefined ? what
                         : `${what}: ${JSON.stringify(detail)}`);
}
const text = (r) => (r.content ?? []).map((c) => c.text ?? '').join('\n');

const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: 'candor-check', version: '1.0.0' });
await client.connect(transport);

// initialize: the negotiated revision, the server, its capabilities.
const server = client.getServerVersion();
check(server?.name === 'candor' && /^\d+\.\d+/.test(server?.version ?? ''),
      'serverInfo', server);
check(transport.protocolVersion === '2025-11-25', 'negotiated revision',
      transport.protocolVersion);
check(typeof transport.sessionId === 'string'
      && /^[0-9a-f]{32}$/.test(transport.sessionId), 'session id',
      transport.sessionId);
const caps = client.getServerCapabilities();
check(caps?.tools && caps?.resources, 'capabilities', caps);
await client.ping();

// tools/list with input schemas
const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(JSON.stringify(names) === JSON.stringify(
  ['ask', 'describe_catalog', 'query_sales', 'search_documents']),
      'tools/list names', names);
for (const t of tools)
  check(t.inputSchema?.type === 'object' && t.description, `schema of ${t.name}`,
        t);

// resources
const { resources } = await client.listResources();
check(resources.map((r) => r.uri).sort().join() ===
      'candor://catalog,candor://documents', 'resources/list', resources);
const docsRes = await client.readResource({ uri: 'candor://documents' });
const docList = JSON.parse(docsRes.contents[0].text);
check(docList.documents.length >= 24 && docList.chunks >= 200,
      'candor://documents', { documents: docList.documents.length,
                              chunks: docList.chunks });
const catRes = await client.readResource({ uri: 'candor://catalog' });
const catText = catRes.contents[0].text;
const catalog = JSON.parse(catText);
check(catalog.tables.some((t) => t.name === 'orders'), 'catalog has orders');
const customers = catalog.tables.find((t) => t.name === 'customers');
check(customers && !customers.columns.some((c) => c.name === 'email'),
      'catalog withholds customers.email', customers);
try {
  await client.readResource({ uri: 'candor://nope' });
  check(false, 'unknown resource is an error');
} catch (e) {
  check(e instanceof McpError && e.code === -32002, 'unknown resource code',
        { code: e.code, message: e.message });
}

// ask: a documents question and a data question, through the whole graph.
const docsQ = 'How much does a basic service cost in the workshop?';
const asked = await client.callTool({ name: 'ask',
                                      arguments: { question: docsQ } });
check(!asked.isError && text(asked).includes('\u20ac79'), 'ask docs answer',
      text(asked));
check(asked.structuredContent?.status === 'answered'
      && asked.structuredContent?.route === 'docs'
      && asked.structuredContent?.citations?.length > 0,
      'ask structured content', asked.structuredContent);
const dataQ = 'How many e-bikes did we sell in Belgium per quarter in 2024?';
const data = await client.callTool({ name: 'ask',
                                     arguments: { question: dataQ } });
check(!data.isError && data.structuredContent?.route === 'data'
      && data.structuredContent?.sql?.query?.startsWith('SELECT'),
      'ask data answer', data.structuredContent);

// search_documents: chunk ids and scores, best first.
const found = await client.callTool({ name: 'search_documents',
  arguments: { query: 'basic service price workshop', k: 3 } });
const hits = found.structuredContent?.results ?? [];
check(!found.isError && hits.length === 3, 'search results', found);
check(hits.every((h) => h.chunkId.includes('#') && typeof h.score === 'number'
                  && h.text.length > 0), 'search hit fields', hits);
check(hits.every((h, i) => i === 0 || hits[i - 1].score >= h.score),
      'search order', hits.map((h) => h.score));

// describe_catalog
const described = await client.callTool({ name: 'describe_catalog',
                                          arguments: {} });
check(!described.isError && described.structuredContent?.tables?.length >= 8,
      'describe_catalog', described.structuredContent?.tables?.length);

// query_sales: allowed, and blocked by two different layers.
const ok = await client.callTool({ name: 'query_sales', arguments: {
  sql: 'SELECT channel, COUNT(*) AS orders FROM orders GROUP BY channel '
       + 'ORDER BY channel' } });
check(!ok.isError && ok.structuredContent?.status === 'answered'
      && ok.structuredContent?.sql?.rowCount >= 2
      && ok.structuredContent?.sql?.columns?.join() === 'channel,orders',
      'query_sales rows', ok.structuredContent);
const del = await client.callTool({ name: 'query_sales',
                                    arguments: { sql: 'DELETE FROM orders' } });
check(del.isError === true && text(del).includes('sql_policy:'),
      'DELETE blocked naming the policy rule', text(del));
check(del.structuredContent?.blockedBy === 'sql_policy',
      'DELETE blockedBy', del.structuredContent);
const pii = await client.callTool({ name: 'query_sales',
  arguments: { sql: 'SELECT email FROM customers' } });
check(pii.isError === true && text(pii).includes('sql_authorizer:'),
      'customers.email blocked by the authorizer', text(pii));

// The blocked query is a request like any other: its run is in the ledger.
const runId = del.structuredContent?.requestId;
let run = null;
for (let i = 0; i < 40 && !run; ++i) {
  const r = await fetch(url.replace(/\/mcp$/, `/runs/${runId}`));
  if (r.ok) run = await r.json();
  else await new Promise((res) => setTimeout(res, 100));
}
check(run && JSON.stringify(run).includes('sql_validate'),
      'the blocked query has a run with its trace', run);

// Bad arguments. In 2025-11-25 a bad value is a tool error the model can
// read; a malformed call (unknown tool, arguments not an object) is -32602.
const badSql = await client.callTool({ name: 'query_sales',
                                       arguments: { sql: 42 } });
check(badSql.isError === true && text(badSql).includes('sql must be a string'),
      'non-string sql', text(badSql));
const longQ = await client.callTool({ name: 'ask',
  arguments: { question: 'x'.repeat(501) } });
check(longQ.isError === true && text(longQ).includes('at most 500'),
      'oversized question', text(longQ));
for (const [what, params] of [
  ['unknown tool', { name: 'drop_tables', arguments: {} }],
  ['arguments not an object', { name: 'ask', arguments: 'hello' }]]) {
  try {
    await client.request({ method: 'tools/call', params },
                         CallToolResultSchema);
    check(false, `${what} is an error`);
  } catch (e) {
    check(e instanceof McpError && e.code === -32602, `${what}: -32602`,
          { code: e.code, message: e.message });
  }
}

// DELETE ends the session; the server forgets it.
const ended = transport.sessionId;
await transport.terminateSession();
const after = await fetch(url, { method: 'POST', headers: {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-session-id': ended, 'mcp-protocol-version': '2025-11-25' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) });
check(after.status === 404, 'ended session is unknown', after.status);
await client.close();

if (failures.length) {
  console.error(`${failures.length} check(s) failed:`);
  for (const f of failures) console.error(' - ' + f);
  process.exit(1);
}
console.log('all MCP client checks passed');
