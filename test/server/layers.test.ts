import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../src/', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Value imports (static and dynamic); `import type` is left out: it vanishes at compile time. */
function valueImports(file: string): Array<{ spec: string; dynamic: boolean }> {
  const text = readFileSync(file, 'utf8');
  const statics = [...text.matchAll(/^import (?!type )[^;]*?from\s+'([^']+)'/gm)].map((match) => ({ spec: match[1]!, dynamic: false }));
  const dynamics = [...text.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((match) => ({ spec: match[1]!, dynamic: true }));
  return [...statics, ...dynamics];
}

describe('the server, key store and remote layers (docs/design.md, Layers)', () => {
  it('keeps the server and the key store free of the CLI: they never print, never read process state', () => {
    const offenders = [...files(join(SRC, 'server')), ...files(join(SRC, 'keys'))].flatMap((file) =>
      valueImports(file)
        .filter(({ spec }) => /^(commander|chalk|ora|cli-table3)$/.test(spec) || /\/(cli|commands)\//.test(spec))
        .map(({ spec }) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
    const processUsers = [...files(join(SRC, 'server')), ...files(join(SRC, 'keys'))].filter((file) =>
      /\bprocess\.(env|argv|exit|stdout|stderr|stdin|on)\b/.test(readFileSync(file, 'utf8')),
    );
    expect(processUsers.map((file) => relative(SRC, file))).toEqual([]);
  });

  it('keeps the remote client off the server\'s packages: a remote run loads no fastify, SQLite or Redis', () => {
    const offenders = files(join(SRC, 'remote')).flatMap((file) =>
      valueImports(file)
        .filter(({ spec }) => /^(fastify|better-sqlite3|ioredis)$/.test(spec) || spec.includes('/server/') || spec.includes('/keys/'))
        .map(({ spec }) => `${relative(SRC, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('loads the server, the key store and the remote client only inside the actions that use them', () => {
    const commands = files(join(SRC, 'commands')).concat(join(SRC, 'app', 'main.ts'), join(SRC, 'app', 'program.ts'));
    const offenders = commands.flatMap((file) =>
      valueImports(file)
        .filter(({ spec, dynamic }) => !dynamic && (/^(fastify|better-sqlite3|ioredis)$/.test(spec) || /\/(server|keys|remote)\//.test(spec)))
        .map(({ spec }) => `${relative(SRC, file)} imports ${spec} at start-up`),
    );
    expect(offenders).toEqual([]);
  });
});
