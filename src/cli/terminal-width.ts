import type { CliIo } from './io.js';

/**
 * The width the human views fit: the terminal's columns when stdout is one,
 * else the COLUMNS variable when it is a positive integer (a pager, a
 * script that knows its width), else 80.
 */
export function terminalWidth(io: Pick<CliIo, 'stdout' | 'env'>): number {
  return widthOf(io.stdout, io.env) ?? 80;
}

/** The columns of `stream` when it is a terminal, else COLUMNS when it is a positive integer, else null. */
export function widthOf(stream: CliIo['stdout'], env: CliIo['env']): number | null {
  const columns = stream.isTTY === true ? stream.columns : undefined;
  if (typeof columns === 'number' && Number.isInteger(columns) && columns > 0) return columns;
  const fromEnv = env.COLUMNS?.trim() ?? '';
  if (/^\d+$/.test(fromEnv) && Number(fromEnv) > 0 && Number.isSafeInteger(Number(fromEnv))) return Number(fromEnv);
  return null;
}
