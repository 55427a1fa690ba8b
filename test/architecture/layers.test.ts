import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles, SRC } from '../support/source-syntax.js';

/** A source file without its comments, so that a comment naming `process.env` is not taken for code. */
function codeOf(file: string): string {
  return readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from\s+|import\()\s*'([^']+)'/g)].map((match) => match[1]!);
}

describe('the layer rule (docs/design.md, Layers)', () => {
  const engineFiles = sourceFiles(join(SRC, 'engine'));

  it('keeps the engine free of CLI, output and server modules', () => {
    const offenders = engineFiles.flatMap((file) =>
      importsOf(file)
        .filter((spec) => /^(commander|chalk|ora|cli-table3|fastify)$/.test(spec) || /\/(cli|output|commands|server)\//.test(spec))
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps the engine primitives (addresses, dataset files) free of the features built on them', () => {
    const primitiveFolders = ['address', 'dataset'].map((folder) => join(SRC, 'engine', folder));
    const isPrimitive = (path: string) => primitiveFolders.some((folder) => path.startsWith(`${folder}/`));
    const primitiveFiles = primitiveFolders.flatMap(sourceFiles);
    expect(primitiveFiles.length).toBeGreaterThan(0);
    const offenders = primitiveFiles.flatMap((file) =>
      importsOf(file)
        .filter((spec) => spec.startsWith('.'))
        .filter((spec) => {
          const target = join(dirname(file), spec);
          // Besides each other, a primitive may use only the modules at the root of src/ (errors.ts).
          return !isPrimitive(target) && dirname(target) !== join(SRC, '.');
        })
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps the engine away from process state and the console', () => {
    const offenders = engineFiles.filter((file) => /\b(process|console)\.\w/.test(codeOf(file)));
    expect(offenders.map((file) => relative(SRC, file))).toEqual([]);
  });

  it('keeps the library entry as pure as the engine: no CLI, output or server, no process, no console', () => {
    const libFiles = sourceFiles(join(SRC, 'lib'));
    expect(libFiles.length).toBeGreaterThan(0);
    const imports = libFiles.flatMap((file) =>
      importsOf(file)
        .filter((spec) => /^(commander|chalk|ora|cli-table3|fastify)$/.test(spec) || /\/(cli|output|commands|server|remote|web|accounts|keys)\//.test(spec))
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(imports).toEqual([]);
    expect(libFiles.filter((file) => /\b(process|console)\.\w/.test(codeOf(file))).map((file) => relative(SRC, file))).toEqual([]);
  });

  it('keeps the output and remote layers from importing the CLI', () => {
    const offenders = [...sourceFiles(join(SRC, 'output')), ...sourceFiles(join(SRC, 'remote'))].flatMap((file) =>
      importsOf(file)
        .filter((spec) => /(^|\/)cli\//.test(spec) || /^(commander|ora)$/.test(spec))
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps the output layer pure: no engine I/O, no process', () => {
    const outputFiles = sourceFiles(join(SRC, 'output'));
    const offenders = outputFiles.filter((file) => {
      const text = readFileSync(file, 'utf8');
      return /\bprocess\./.test(text) || importsOf(file).some((spec) => /^node:(fs|net|dgram)$/.test(spec));
    });
    expect(offenders.map((file) => relative(SRC, file))).toEqual([]);
  });

  it('lets only the store layer reach the database (docs/design.md, One database port for the stores): no SQLite or PostgreSQL driver elsewhere', () => {
    const offenders = sourceFiles(SRC)
      .filter((file) => !relative(SRC, file).startsWith('store/'))
      .flatMap((file) =>
        importsOf(file)
          .filter((spec) => /^(better-sqlite3|pg)$/.test(spec))
          .map((spec) => `${relative(SRC, file)} imports ${spec}`),
      );
    expect(offenders).toEqual([]);
  });

  it('tells an IP address from a name one way (engine/address/ip-text.ts), not with node:net\'s isIP, and aligns domains one way (engine/mail/organisational-domain.ts)', () => {
    const offenders = sourceFiles(SRC).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      const found: string[] = [];
      if (/import\s*\{[^}]*\bisIP(v4|v6)?\b[^}]*\}\s*from\s*'node:net'/.test(text)) found.push(`${relative(SRC, file)} imports isIP from node:net`);
      if (importsOf(file).some((spec) => spec === 'mailauth/lib/tools.js' || (spec === 'tldts' && !file.endsWith('organisational-domain.ts')))) found.push(`${relative(SRC, file)} aligns domains itself`);
      return found;
    });
    expect(offenders).toEqual([]);
  });

  it('lets only the CLI and its composition root set exit codes, and nothing call process.exit', () => {
    const all = sourceFiles(SRC);
    expect(all.filter((file) => /process\.exit\(/.test(readFileSync(file, 'utf8'))).map((file) => relative(SRC, file))).toEqual([]);
    const exitCodeUsers = all.filter((file) => /exitCodeFor\(/.test(readFileSync(file, 'utf8'))).map((file) => relative(SRC, file));
    expect(exitCodeUsers.every((file) => file.startsWith('cli/') || file.startsWith('app/'))).toBe(true);
  });
});

/** Value imports (static and dynamic): an `import type` vanishes at compile time. */
function valueImportsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^import (?!type )[^;]*?from\s+'([^']+)'/gm), ...text.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((match) => match[1]!);
}

describe('the operations and the composition root (docs/design.md, Operations)', () => {
  const below = (folder: string) => sourceFiles(join(SRC, folder));

  it('lets nothing climb back up to the composition root: only src/app imports src/app', () => {
    const offenders = sourceFiles(SRC)
      .filter((file) => !relative(SRC, file).startsWith('app/'))
      .flatMap((file) => importsOf(file).filter((spec) => /(^|\/)app\//.test(spec)).map((spec) => `${relative(SRC, file)} imports ${spec}`));
    expect(offenders).toEqual([]);
  });

  it('keeps the command modules out of the CLI machinery, the operations, the server and the remote engine', () => {
    const offenders = ['cli', 'operations', 'server', 'remote'].flatMap(below).flatMap((file) =>
      importsOf(file)
        .filter((spec) => /(^|\/)commands\//.test(spec))
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps the operations free of the CLI, the server and the remote client at run time (their types only)', () => {
    const offenders = below('operations').flatMap((file) =>
      valueImportsOf(file)
        .filter((spec) => /^(commander|fastify)$/.test(spec) || /(^|\/)(cli|server|remote|keys)\//.test(spec))
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps the CLI machinery off the server: it reaches it only through the composition root', () => {
    const offenders = below('cli').flatMap((file) =>
      valueImportsOf(file)
        .filter((spec) => /^(fastify|better-sqlite3|ioredis)$/.test(spec) || /(^|\/)(server|keys|store)\//.test(spec))
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });
});

describe.each(['main', 'mail'])('the bundle %s.cjs', (name) => {
  const bundle = new URL(`../../dist/bundle/${name}.cjs`, import.meta.url).pathname;

  it.skipIf(!existsSync(bundle))('holds no dynamic import(), which bin/load-bundle.js could not run', () => {
    // A string or comment can mention import(; code calling it has this shape.
    expect(readFileSync(bundle, 'utf8').match(/\bimport\(\s*["'`]/g)).toBeNull();
  });
});
