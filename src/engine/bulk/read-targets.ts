/** One input line that holds a target: its text (trimmed) and its line number. */
export interface Target {
  text: string;
  line: number;
}

/** A target and the input it came from (null when the run reads a single input). */
export type SourcedTarget = Target & { source: string | null };

/**
 * Reads targets from text chunks (a file or stdin), yielding them in batches
 * (one per chunk) so that bulk runs pay the async overhead per chunk, not per
 * line. Blank lines and `#` comments are skipped; CRLF endings are accepted;
 * line numbers count every line, skipped ones included. Each target names
 * `source`, the input it comes from (null when a run reads one input): set
 * as the target is made, so every target has one shape.
 */
export async function* readTargetBatches(chunks: AsyncIterable<string | Uint8Array>, source: string | null = null): AsyncGenerator<SourcedTarget[]> {
  const decoder = new TextDecoder('utf-8');
  // The start of a line that has not ended yet, in pieces: each chunk is
  // searched for line ends once, so a line spread over many chunks costs
  // time in proportion to its length, not its square.
  let pending: string[] = [];
  let line = 0;
  const collect = (text: string, batch: SourcedTarget[]) => {
    line += 1;
    const trimmed = text.trim();
    if (trimmed.length > 0 && !trimmed.startsWith('#')) batch.push({ text: trimmed, line, source });
  };
  const rest = (piece: string) => {
    if (pending.length === 0) return piece;
    const whole = pending.join('') + piece;
    pending = [];
    return whole;
  };
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const batch: SourcedTarget[] = [];
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      collect(rest(text.slice(start, newline)), batch);
      start = newline + 1;
    }
    if (start < text.length) pending.push(text.slice(start));
    if (batch.length > 0) yield batch;
  }
  const last = rest(decoder.decode());
  if (last.length > 0) {
    const batch: SourcedTarget[] = [];
    collect(last, batch);
    if (batch.length > 0) yield batch;
  }
}

/** Targets given as arguments, numbered from 1, with the same skipping rules. */
export function targetsFromArguments(values: readonly string[]): Target[] {
  return values.map((text, i) => ({ text: text.trim(), line: i + 1 }));
}
