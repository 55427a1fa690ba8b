import type { CliIo } from './io.js';

/**
 * The width the human views fit: the terminal's columns when stdout is one,
 * else the COLUMNS variable when it is a positive integer (a pager, a
 * script that knows its width), else 80.
 */
export function terminalWidth(io: Pick<CliIo, 'stdout' | 'env'>): number {
  const columns = io.stdout.isTTY === true ? io.stdout.columns : undefined;
  if (typeof columns === 'number' && Number.isInteger(columns) && columns > 0) return columns;
  const fromEnv = io.env.COLUMNS?.trim() ?? '';
  if (/^\d+$/.test(fromEnv) && Number(fromEnv) > 0 && Number.isSafeInteger(Number(fromEnv))) return Number(fromEnv);
  return 80;
}
