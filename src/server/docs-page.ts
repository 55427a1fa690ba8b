import { ERROR_CODES } from '../errors.js';
import type { PlanTable } from '../keys/plans.js';

/**
 * The readable docs page (GET /docs): the OpenAPI document rendered as one
 * self-contained HTML page (no scripts, nothing fetched from elsewhere),
 * with the plans of this server's plans file.
 */
export function renderDocsPage(document: Record<string, unknown>, plans: PlanTable): string {
  const info = document.info as { title: string; version: string; description: string };
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const endpoints = Object.entries(paths)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => endpoint(path, method.toUpperCase(), op)))
    .join('\n');
  const planRows = Object.values(plans.plans)
    .map(
      (plan) =>
        `<tr><td>${esc(plan.title)} <code>${esc(plan.name)}</code></td><td>${plan.daily.toLocaleString('en-US')}</td><td>${plan.perMinute.toLocaleString('en-US')}</td>` +
        `<td>${plan.burst.toLocaleString('en-US')}</td><td>${plan.batch}</td><td>${plan.features.includes('bulk') ? plans.bulkMax : '-'}</td>` +
        `<td>${plan.features.length > 0 ? plan.features.map(esc).join(', ') : 'basic geolocation'}</td></tr>`,
    )
    .join('\n');
  const problems = Object.entries(ERROR_CODES)
    .filter(([, entry]) => entry.http !== null)
    .map(([code, entry]) => `<tr id="problem-${code}"><td><code>${code}</code></td><td>${entry.http}</td><td>${esc(entry.meaning)}</td></tr>`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} ${esc(info.version)}</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; }
code, pre { font: 13px/1.4 ui-monospace, monospace; background: #f3f3f3; border-radius: 3px; }
code { padding: 0 .2em; } pre { padding: .6em; overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0 1rem; } td, th { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; vertical-align: top; }
h2 { border-bottom: 1px solid #ccc; margin-top: 2.5rem; } h3 { margin-top: 2rem; }
.method { font-weight: bold; color: #0b5394; } .pending { color: #a61c00; }
</style>
</head>
<body>
<h1>${esc(info.title)} <small>${esc(info.version)}</small></h1>
<p>${esc(info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>

<h2 id="auth">Authentication</h2>
<p>The free tier needs nothing. With a key, send it in the <code>X-API-Key</code> header:</p>
<pre>curl -H 'X-API-Key: ni_…' '/api/ipinfo?ip=8.8.8.8'</pre>
<p>A malformed, unknown or revoked key is refused with 401; a key-only endpoint called without a key answers 401,
and with a key whose plan lacks the feature 403. Without a key (or on a plan without premium fields) the IP record
leaves out <code>network</code> and <code>security</code>, says so in <code>note</code> and in the header
<code>X-Netintel-Withheld</code>.</p>

<h2 id="plans">Plans</h2>
<table>
<tr><th>plan</th><th>per UTC day</th><th>per minute (refill)</th><th>burst (bucket)</th><th>bulk-form batch</th><th>POST /api/bulk</th><th>features</th></tr>
${planRows}
</table>
<p>Each caller (a key; without one, the address, or its /64 for IPv6) has a <strong>burst bucket</strong> holding
<em>burst</em> tokens that refills at <em>per minute</em> tokens a minute, and a <strong>daily allowance</strong> that
resets at 00:00 UTC. A request takes one token and one unit of the day per item it asks for (one for a lookup,
one per item for bulk forms) and is accepted only when both have enough; a refused request costs nothing.</p>
<p>Every answer carries <code>X-RateLimit-Limit</code>, <code>X-RateLimit-Remaining</code> and
<code>X-RateLimit-Reset</code> for the daily window (Reset: Unix time of the next 00:00 UTC), and
<code>X-RateLimit-Burst-Limit</code> / <code>X-RateLimit-Burst-Remaining</code> for the bucket. A 429 adds
<code>X-RateLimit-RetryAfter</code> and <code>Retry-After</code> (seconds), and its body's <code>details</code> say which
limit refused the request. Back off exponentially with jitter, waiting at least RetryAfter. <code>GET /api/quota</code>
shows the caller's plan and what is left, free of charge.</p>

<h2 id="endpoints">Endpoints</h2>
${endpoints}

<h2 id="errors">Errors</h2>
<p>Errors are <code>application/problem+json</code> (RFC 9457) with a stable <code>code</code>; <code>detail</code> says
what went wrong and <code>details</code> holds facts about it. A request body over the size limit answers 413 with code
<code>usage</code>.</p>
<table>
<tr><th>code</th><th>status</th><th>meaning</th></tr>
${problems}
</table>
</body>
</html>
`;
}

interface Operation {
  summary?: string;
  description?: string;
  parameters?: Array<{ name: string; required: boolean; description?: string; schema: Record<string, unknown> }>;
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> };
  security?: Array<Record<string, unknown>>;
  'x-netintel-plan-feature'?: string;
  responses: Record<string, unknown>;
}

function endpoint(path: string, method: string, op: Operation): string {
  const pending = op.responses['501'] !== undefined;
  const params = op.parameters ?? [];
  const table =
    params.length === 0
      ? ''
      : `<table><tr><th>parameter</th><th>type</th><th>required</th><th>notes</th></tr>${params
          .map(
            (param) =>
              `<tr><td><code>${esc(param.name)}</code></td><td>${esc(describeType(param.schema))}</td><td>${param.required ? 'yes' : 'no'}</td><td>${esc(param.description ?? '')}</td></tr>`,
          )
          .join('')}</table>`;
  const body = op.requestBody?.content['application/json'];
  const bodyBlock = body
    ? `<p>Request body (JSON):</p><pre>${esc(JSON.stringify(body.schema, null, 2))}</pre>${
        body.example ? `<p>Example:</p><pre>${esc(`curl -H 'X-API-Key: ni_…' -H 'content-type: application/json' -d '${JSON.stringify(body.example)}' '${path}'`)}</pre>` : ''
      }`
    : '';
  const feature = op['x-netintel-plan-feature'];
  const access = feature ? `<p>Needs a key whose plan includes <code>${esc(feature)}</code>.</p>` : '';
  return `<h3 id="${esc(method.toLowerCase() + path.replaceAll('/', '-'))}"><span class="method">${method}</span> <code>${esc(path)}</code></h3>
<p>${esc(op.summary ?? '')}${pending ? ' <span class="pending">(not available yet: 501)</span>' : ''}</p>
<p>${esc(op.description ?? '')}</p>
${access}${table}${bodyBlock}`;
}

function describeType(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.enum)) return schema.enum.join(' | ');
  return String(schema.type ?? 'string');
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}
