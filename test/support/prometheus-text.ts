/**
 * A strict reader of Prometheus' text exposition format (version 0.0.4):
 * `# HELP` and `# TYPE` lines, then samples `name{label="value",...} value`.
 * Any other line is an error, so that a test scraping /metrics also proves
 * the page is what a Prometheus server can read.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** The TYPE of each metric family. */
  types: Map<string, string>;
  /** The sum of the samples named `name` whose labels include `labels`. */
  total(name: string, labels?: Record<string, string>): number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;

function labelsOf(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (match === null) throw new Error(`malformed labels in ${JSON.stringify(line)}`);
    labels[match[1]!] = match[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/** A sample's value as Prometheus reads it (Go's ParseFloat: Inf and NaN in any case; prom-client writes `Nan`). */
function valueOf(text: string, line: string): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const value = Number(text);
  if (!Number.isFinite(value) || text.trim() === '') throw new Error(`malformed value in ${JSON.stringify(line)}`);
  return value;
}

export function parsePrometheusText(text: string): Exposition {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a line feed');
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`).exec(line);
      if (meta === null) throw new Error(`malformed comment line ${JSON.stringify(line)}`);
      if (meta[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(meta[3]!)) throw new Error(`unknown type in ${JSON.stringify(line)}`);
        types.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`malformed sample line ${JSON.stringify(line)}`);
    samples.push({ name: match[1]!, labels: match[2] ? labelsOf(match[2], line) : {}, value: valueOf(match[3]!, line) });
  }
  return {
    samples,
    types,
    total: (name, labels = {}) =>
      samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)).reduce((sum, sample) => sum + sample.value, 0),
  };
}
