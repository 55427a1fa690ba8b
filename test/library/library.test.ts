/**
 * The library as a consumer sees it: a project outside src/ whose
 * node_modules/netintel is the repository, importing the package's own
 * exports. Runs every example of docs/library.md with node against a local
 * DNS server and type-checks a TypeScript consumer against the emitted
 * declarations. Needs `npm run build` (dist/src/lib, dist/netintel.d.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');
const DOC = join(ROOT, 'docs', 'library.md');
const BUILT = existsSync(join(ROOT, 'dist', 'src', 'lib', 'index.js')) && existsSync(join(ROOT, 'dist', 'netintel.d.ts'));

interface Example {
  code: string;
  expected: string;
}

/** Each ```js block of the page and the ```text block that follows it. */
function examplesOf(markdown: string): Example[] {
  const blocks = [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1]!, body: match[2]! }));
  const examples: Example[] = [];
  blocks.forEach((block, index) => {
    if (block.lang !== 'js') return;
    const next = blocks[index + 1];
    if (next?.lang !== 'text') throw new Error(`docs/library.md: a js example without the text block of its output:\n${block.body}`);
    examples.push({ code: block.body, expected: next.body });
  });
  return examples;
}

describe.skipIf(!BUILT)('netintel imported as a package', () => {
  let project: string;
  let dns: DnsTestServer;

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'netintel-consumer-'));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(ROOT, join(project, 'node_modules', 'netintel'), 'dir');
    // The consumer's own @types/node, as a real project would install it.
    mkdirSync(join(project, 'node_modules', '@types'));
    symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'), 'dir');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    dns = await startDnsServer({
      records: [
        { name: 'example.com', type: 'A', data: '192.0.2.10' },
        { name: 'example.com', type: 'MX', data: { preference: 10, exchange: 'mail.example.com' } },
        { name: 'example.com', type: 'TXT', data: ['v=spf1 ip4:192.0.2.0/24 -all'] },
      ],
    });
  });

  afterAll(async () => {
    await dns?.close();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  const examples = examplesOf(readFileSync(DOC, 'utf8'));

  it('finds the examples of docs/library.md', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
  });

  it.each(examples.map((example, index) => [index + 1, example] as const))('runs example %i and prints what the page says', async (index, example) => {
    // The page names a public resolver (1.1.1.1); the run asks the local server instead.
    const code = example.code.replace(/resolvers: \[[^\]]*'1\.1\.1\.1'[^\]]*\]/g, `resolvers: ['${dns.address}']`);
    const file = join(project, `example-${index}.mjs`);
    writeFileSync(file, code);
    const { stdout, stderr } = await run(process.execPath, [file], { cwd: project, timeout: 20_000 });
    expect(stderr).toBe('');
    expect(stdout).toBe(example.expected);
  });

  it('exposes only the entry and package.json', async () => {
    const probe = join(project, 'deep-import.mjs');
    writeFileSync(probe, "await import('netintel/dist/src/engine/context.js').then(() => console.log('open'), (error) => console.log(error.code));");
    const { stdout } = await run(process.execPath, [probe], { cwd: project });
    expect(stdout.trim()).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it('ships its types as one declaration file with no imports of its own modules', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { types: string; exports: { '.': { types: string } } };
    expect(manifest.exports['.'].types).toBe(manifest.types);
    const declarations = readFileSync(join(ROOT, manifest.types), 'utf8');
    const imported = [...declarations.matchAll(/^(?:import|export)\b.*\bfrom\s+'([^']+)'/gm)].map((match) => match[1]);
    expect(imported.filter((specifier) => !specifier!.startsWith('node:'))).toEqual([]);
    for (const name of ['createNetintel', 'lookupIp', 'resolveDns', 'checkSpf', 'checkEmail', 'checkDkim', 'checkBimi', 'validateDnssec', 'bulkLookup', 'NetintelError']) {
      expect(declarations).toMatch(new RegExp(`^export (?:declare )?(?:function|class) ${name}\\b`, 'm'));
    }
  });

  it('type-checks a TypeScript consumer against the emitted declarations', async () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', lib: ['ES2023', 'ESNext.Disposable'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: false },
        files: ['consumer.ts'],
      }),
    );
    writeFileSync(
      join(project, 'consumer.ts'),
      [
        "import { createNetintel, lookupIp, resolveDns, checkSpf, checkEmail, checkDkim, checkBimi, validateDnssec, bulkLookup, NetintelError } from 'netintel';",
        "import type { BulkOutcome, DnsResult, DnssecStatus, ErrorCode, IpInfoRecord, NetintelOptions, SpfStatus } from 'netintel';",
        "const options: NetintelOptions = { resolvers: ['9.9.9.9:53'], timeoutMs: 1000, retries: 0 };",
        'await using client = createNetintel(options);',
        "const record: IpInfoRecord = await lookupIp(client, '192.0.2.1');",
        'const asn: number | null = record.network.asn;',
        "const answers: DnsResult[] = await resolveDns(client, 'example.com', { types: ['A', 'ALL'] });",
        "const spf: SpfStatus = (await checkSpf(client, 'example.com', { ip: '192.0.2.1' })).status;",
        "const dnssec: DnssecStatus = (await validateDnssec(client, 'example.com', 'A')).status;",
        "await checkEmail(client, 'example.com', { type: 'general', skipSmtp: true });",
        "await checkDkim(client, 'example.com', { selectors: ['s1'] });",
        "await checkBimi(client, 'example.com', { selector: 'default' });",
        "async function* inputs(): AsyncGenerator<string> { yield '192.0.2.1'; }",
        'for await (const outcome of bulkLookup(client, inputs())) {',
        '  const same: BulkOutcome = outcome;',
        '  if (!same.ok) { const code: ErrorCode = same.error.code; void code; }',
        '}',
        "try { createNetintel({ resolvers: ['x'] }); } catch (error) { if (error instanceof NetintelError) { const code: ErrorCode = error.code; void code; } }",
        'void asn; void answers; void spf; void dnssec;',
        'export {};',
        '',
      ].join('\n'),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', project], { cwd: project, timeout: 120_000 }).catch((error: { stdout: string }) => error);
    expect(result.stdout).toBe('');

    // And the types do catch a misuse: a result field that does not exist.
    writeFileSync(join(project, 'consumer.ts'), "import { createNetintel, lookupIp } from 'netintel';\nconst r = await lookupIp(createNetintel(), '192.0.2.1');\nr.no_such_field;\nexport {};\n");
    const misuse = await run(process.execPath, [tsc, '-p', project], { cwd: project, timeout: 120_000 }).then(
      () => ({ stdout: '' }),
      (error: { stdout: string }) => error,
    );
    expect(misuse.stdout).toMatch(/no_such_field/);
  }, 180_000);
});
