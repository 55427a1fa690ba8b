/**
 * Where `netintel serve` logs: JSON lines (pino's, from fastify) when stderr
 * is a file or a pipe, for a log collector; on a terminal, pino-pretty's
 * lines, formatted in this process as each is written (no worker thread),
 * one per request: time, level, method, path, status, duration and key id.
 * Colour unless NO_COLOR or TERM=dumb.
 */
import type { CliIo } from '../cli/io.js';
import { escapeTerminalText } from '../output/terminal-text.js';

export interface LogStream {
  write(line: string): unknown;
}

/** The fields of the per-request line, shown in its message and not again as an object. */
const REQUEST_FIELDS = ['method', 'path', 'status', 'ms', 'client', 'key', 'plan', 'limited'];

export async function serveLogStream(io: CliIo): Promise<LogStream> {
  if (io.stderr.isTTY !== true) return io.stderr;
  const { prettyFactory } = (await import('pino-pretty')).default;
  const colorize = !io.env.NO_COLOR && io.env.TERM !== 'dumb';
  const pretty = prettyFactory({
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: ['pid', 'hostname', 'reqId', ...REQUEST_FIELDS].join(','),
    singleLine: true,
    messageFormat: (log, messageKey) => (log[messageKey] === 'request' ? requestLine(log) : String(log[messageKey] ?? '')),
  });
  return {
    // Bytes: the CLI's stderr escapes control characters of text, which would show the colours as
    // text; the log's own strings (paths, messages a client chose) are escaped here instead.
    write: (line: string) => io.stderr.write(Buffer.from(pretty(escapedStrings(JSON.parse(line))))),
  };
}

/** The log record with control characters of every string made visible (terminal-text.ts). */
function escapedStrings(value: unknown): unknown {
  if (typeof value === 'string') return escapeTerminalText(value, { keepNewlines: true });
  if (Array.isArray(value)) return value.map(escapedStrings);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [escapeTerminalText(key), escapedStrings(item)]));
  return value;
}

function requestLine(log: Record<string, unknown>): string {
  const key = typeof log.key === 'string' ? ` key ${log.key}` : '';
  const limited = typeof log.limited === 'string' ? ` limited by ${log.limited}` : '';
  return `${String(log.method)} ${String(log.path)} ${String(log.status)} ${String(log.ms)} ms${key}${limited}`;
}
