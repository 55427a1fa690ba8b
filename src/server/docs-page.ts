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
  const schemas = ((document.components as { schemas?: Record<string, Schema> } | undefined)?.schemas ?? {}) as Record<string, Schema>;
  const endpoints = Object.entries(paths)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => endpoint(path, method.toUpperCase(), op, schemas)))
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
code { padding: 0 .2em; } pre { padding: .6em; white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .5rem 0 1rem; } summary { cursor: pointer; }
table { border-collapse: collapse; margin: .5rem 0 1rem; } td, th { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; vertical-align: top; }
h2 { border-bottom: 1px solid #ccc; margin-top: 2.5rem; } h3 { margin-top: 2rem; }
.method { font-weight: bold; color: #0b5394; } .pending { color: #a61c00; }
</style>
</head>
<body>
<h1>${esc(info.title)} <small>${esc(info.version)}</small></h1>
${text(info.description)}
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>

<h2 id="auth">Authentication</h2>
<p>The free tier needs nothing. With a key, send it in the <code>X-API-Key</code> header:</p>
<pre class="curl">curl -H 'X-API-Key: ni_…' "$NETINTEL_SERVER/api/ipinfo?ip=8.8.8.8"</pre>
<p>The examples below read the server's address from <code>NETINTEL_SERVER</code> (as the CLI's remote mode does), e.g.
<code>export NETINTEL_SERVER=http://127.0.0.1:8080</code>.</p>
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

type Schema = Record<string, unknown>;

interface Operation {
  summary?: string;
  description?: string;
  parameters?: Array<{ name: string; required: boolean; description?: string; style?: string; explode?: boolean; schema: Schema }>;
  'x-codeSamples'?: Array<{ lang: string; label?: string; source: string }>;
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> };
  security?: Array<Record<string, unknown>>;
  'x-netintel-plan-feature'?: string;
  responses: Record<string, unknown>;
}

/** A parameter per row; the form-exploded query object of a route with rules: a row per member, then the rules. */
function parameterRows(op: Operation): { rows: Array<{ name: string; schema: Schema; required: boolean; description: string }>; rules: string[] } {
  const rows: Array<{ name: string; schema: Schema; required: boolean; description: string }> = [];
  const rules: string[] = [];
  for (const param of op.parameters ?? []) {
    if (param.style === 'form' && param.explode === true && param.schema.type === 'object') {
      const required = new Set((param.schema.required as string[] | undefined) ?? []);
      for (const [name, member] of Object.entries((param.schema.properties ?? {}) as Record<string, Schema>)) {
        rows.push({ name, schema: member, required: required.has(name), description: String(member.description ?? '') });
      }
      rules.push(...describeRules(param.schema));
    } else {
      rows.push({ name: param.name, schema: param.schema, required: param.required, description: param.description ?? '' });
    }
  }
  return { rows, rules };
}

/** The rules between parameters, as sentences: oneOf (exactly one of the forms), dependentRequired. */
function describeRules(schema: Schema): string[] {
  const rules: string[] = [];
  const forms = (schema.oneOf as Schema[] | undefined) ?? [];
  if (forms.length > 0 && forms.every((form) => Object.keys(form).length === 1 && Array.isArray(form.required) && form.required.length === 1)) {
    rules.push(`Give exactly one of ${forms.map((form) => `\`${String((form.required as string[])[0])}\``).join(', ')}.`);
  } else if (forms.length > 0) {
    rules.push(`Exactly one of these forms: ${forms.map((form) => String(form.description ?? `with ${((form.required as string[] | undefined) ?? []).join(', ')}`)).join(' ')}`);
  }
  for (const [name, needs] of Object.entries((schema.dependentRequired ?? {}) as Record<string, string[]>)) {
    rules.push(`\`${name}\` needs ${needs.map((item) => `\`${item}\``).join(', ')}.`);
  }
  return rules;
}

function endpoint(path: string, method: string, op: Operation, schemas: Record<string, Schema>): string {
  const pending = op.responses['501'] !== undefined;
  const { rows, rules } = parameterRows(op);
  const table =
    rows.length === 0
      ? ''
      : `<table><tr><th>parameter</th><th>type</th><th>required</th><th>notes</th></tr>${rows
          .map(
            (row) =>
              `<tr><td><code>${esc(row.name)}</code></td><td>${esc(describeType(row.schema))}</td><td>${row.required ? 'yes' : 'no'}</td><td>${inline(row.description)}</td></tr>`,
          )
          .join('')}</table>`;
  const ruleBlock = rules.length === 0 ? '' : `<ul>${rules.map((rule) => `<li>${inline(rule)}</li>`).join('')}</ul>`;
  const body = op.requestBody?.content['application/json'];
  const bodyBlock = body ? `<details><summary>Request body (JSON Schema)</summary><pre>${esc(JSON.stringify(body.schema, null, 2))}</pre></details>` : '';
  const samples = op['x-codeSamples'] ?? [];
  const sampleBlock = samples.length === 0 ? '' : `<p>Examples:</p>${samples.map((sample) => `<pre class="curl">${esc(sample.source)}</pre>`).join('')}`;
  const ok = (op.responses['200'] as { content?: Record<string, { schema?: Schema; example?: unknown }> } | undefined)?.content?.['application/json'];
  const example = ok?.example ?? (ok?.schema ? exampleOf(ok.schema, schemas, 0) : undefined);
  const exampleBlock =
    example === undefined ? '' : `<details><summary>Example response (200, application/json)</summary><pre>${esc(JSON.stringify(example, null, 2))}</pre></details>`;
  const statuses = Object.keys(op.responses).join(', ');
  const feature = op['x-netintel-plan-feature'];
  const access = feature ? `<p>Needs a key whose plan includes <code>${esc(feature)}</code>.</p>` : '';
  return `<h3 id="${esc(method.toLowerCase() + path.replaceAll('/', '-'))}"><span class="method">${method}</span> <code>${esc(path)}</code></h3>
<p>${inline(op.summary ?? '')}${pending ? ' <span class="pending">(not available yet: 501)</span>' : ''}</p>
${text(op.description ?? '')}
${access}${table}${ruleBlock}${bodyBlock}${sampleBlock}${exampleBlock}<p>Statuses: ${esc(statuses)} (errors: <a href="#errors">problem documents</a>).</p>`;
}

/**
 * An example value of a schema: its example, const or first enum value, else
 * a value of its (first non-null) type; $refs followed, recursion cut at a
 * depth. Shown where no recorded example exists.
 */
function exampleOf(schema: Schema, schemas: Record<string, Schema>, depth: number): unknown {
  if (depth > 12) return null;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (typeof schema.$ref === 'string') {
    const target = schemas[schema.$ref.split('/').pop()!];
    return target ? exampleOf(target, schemas, depth + 1) : null;
  }
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.find((value) => value !== null) ?? null;
  const choices = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (choices) {
    const choice = choices.find((item) => item.type !== 'null') ?? choices[0]!;
    return exampleOf(choice, schemas, depth + 1);
  }
  const type = Array.isArray(schema.type) ? (schema.type.find((item) => item !== 'null') ?? 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const value: Record<string, unknown> = {};
      for (const [name, member] of Object.entries(properties)) if (member !== (false as unknown)) value[name] = exampleOf(member, schemas, depth + 1);
      return value;
    }
    case 'array':
      return depth > 6 || !schema.items ? [] : [exampleOf(schema.items as Schema, schemas, depth + 1)];
    case 'integer':
      return 0;
    case 'number':
      return 0.5;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return schema.format === 'date-time' ? '2030-01-01T00:00:00.000Z' : 'string';
    default:
      return null;
  }
}

function describeType(schema: Schema): string {
  if (Array.isArray(schema.enum)) return schema.enum.join(' | ');
  return String(schema.type ?? 'string');
}

/**
 * Descriptions are CommonMark (OpenAPI); the page renders the one construct
 * they use, `code`, as <code>, after escaping everything else.
 */
function inline(markdown: string): string {
  return esc(markdown).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** Paragraphs (blank-line separated) of inline text. */
function text(markdown: string): string {
  return markdown
    .split(/\n\s*\n/)
    .filter((paragraph) => paragraph.trim() !== '')
    .map((paragraph) => `<p>${inline(paragraph)}</p>`)
    .join('\n');
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}
