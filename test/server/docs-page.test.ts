import { describe, expect, it } from 'vitest';
import { loadPlanTable } from '../../src/keys/plans.js';
import { renderDocsPage } from '../../src/server/docs-page.js';
import { buildOpenApiDocument } from '../../src/server/openapi.js';
import { apiRoutes } from '../../src/server/routes/route-table.js';
import { loadOperations } from '../../src/operations/operations.js';

const plans = loadPlanTable();
const operations = await loadOperations();
const routes = apiRoutes(plans, operations);
const page = renderDocsPage(await buildOpenApiDocument({ routes, operations, plans, version: '1.2.3' }), plans);

describe('the docs page', () => {
  it('renders descriptions as text: no Markdown backticks, code spans as <code>', () => {
    const text = page.replace(/<pre[^>]*>[\s\S]*?<\/pre>/g, '');
    expect(text).not.toContain('`');
    expect(page).toContain('<code>netintel asn</code>');
  });

  it('escapes what the descriptions hold, inside code spans too', () => {
    expect(page).not.toMatch(/<code>[^<]*<(?!\/code>)[^<]*<\/code>/);
    expect(page).toContain('the API&#39;s endpoints');
  });

  it('shows an example response and the statuses of every endpoint', () => {
    for (const route of routes) {
      const id = `${route.method.toLowerCase()}${route.url.replaceAll('/', '-')}`;
      const section = page.slice(page.indexOf(`id="${id}"`), page.indexOf('<h3', page.indexOf(`id="${id}"`) + 1));
      expect(section, route.url).toContain('Example response (200, application/json)');
      expect(section, route.url).toMatch(/Statuses: 200, 400, 401, 403, 404, 405/);
      const example = section.match(/Example response[^<]*<\/summary><pre>([\s\S]*?)<\/pre>/)![1]!;
      expect(() => JSON.parse(example.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')), route.url).not.toThrow();
    }
  });

  it('gives curl examples that wrap, and the rules between parameters in words', () => {
    expect(page).toMatch(/pre \{[^}]*white-space: pre-wrap; overflow-wrap: anywhere;/);
    expect(page).toContain('curl &quot;$NETINTEL_SERVER/api/asn-lookup?ip=8.8.8.8&quot;');
    expect(page).toContain('Give exactly one of <code>ip</code>, <code>asn</code>, <code>bulk</code>.');
    expect(page).toContain('<code>server</code> needs <code>type</code>.');
  });
});
