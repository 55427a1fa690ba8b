import { Chalk, type ChalkInstance } from 'chalk';

/** What every human view is drawn with: the width to fit and whether to colour. */
export interface ViewContext {
  width: number;
  chalk: ChalkInstance;
  /** `--all`: every field, null ones too. */
  all: boolean;
}

export function viewContext(options: { width: number; color: boolean; all: boolean }): ViewContext {
  return { width: Math.max(20, Math.floor(options.width)), chalk: new Chalk({ level: options.color ? 1 : 0 }), all: options.all };
}

/** How a verdict reads: bad (red), doubtful (yellow), good (green), or plain. */
export type Tone = 'bad' | 'warn' | 'good' | 'plain';

export function toned(ctx: ViewContext, tone: Tone, text: string): string {
  const { chalk } = ctx;
  switch (tone) {
    case 'bad':
      return chalk.red.bold(text);
    case 'warn':
      return chalk.yellow.bold(text);
    case 'good':
      return chalk.green.bold(text);
    case 'plain':
      return chalk.bold(text);
  }
}
