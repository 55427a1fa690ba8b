/**
 * The reason a file could not be read, in words, for a message that names
 * the file already: Node's `ENOENT: no such file or directory, open
 * 'access.log'` gives `no such file or directory` (its message without the
 * code before it and the call and path after it). Anything that is not a
 * system error of that form gives its message as it is.
 */
export function fileErrorReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const { code, syscall, path, dest } = error as { code?: unknown; syscall?: unknown; path?: unknown; dest?: unknown };
  if (typeof code !== 'string' || typeof syscall !== 'string') return message;
  const prefix = `${code}: `;
  const suffix = `, ${syscall}${typeof path === 'string' ? ` '${path}'` : ''}${typeof dest === 'string' ? ` -> '${dest}'` : ''}`;
  if (!message.startsWith(prefix) || !message.endsWith(suffix) || message.length <= prefix.length + suffix.length) return message;
  return message.slice(prefix.length, message.length - suffix.length);
}
