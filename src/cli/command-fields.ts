import type { Command } from 'commander';
import type { RecordSchema } from '../output/record-schema.js';

/** The records each command prints, set where the command is registered. */
const RECORDS = new WeakMap<Command, RecordSchema>();

/** Says which records a command prints: its `--fields` names, in its help and its completions. */
export function declareRecords(command: Command, schema: RecordSchema): void {
  RECORDS.set(command, schema);
}

/** The records a command and its subcommands declare. */
export function declaredRecords(command: Command): RecordSchema[] {
  const own = RECORDS.get(command);
  return [...(own ? [own] : []), ...command.commands.flatMap(declaredRecords)];
}

/** The names `--fields` takes for a command (groups, then every column), or none for a command without records. */
export function fieldNames(command: Command): readonly string[] {
  const schema = RECORDS.get(command);
  return schema === undefined ? [] : [...Object.keys(schema.groups), ...schema.columns];
}

/** The help section listing a command's fields, wrapped to `width`; empty for a command without records. */
export function fieldsHelp(command: Command, width = 80): string {
  const names = fieldNames(command);
  if (names.length === 0) return '';
  const lines: string[] = [];
  let line = '';
  names.forEach((name, i) => {
    const item = i < names.length - 1 ? `${name},` : name;
    if (line !== '' && 2 + line.length + 1 + item.length > width) {
      lines.push(`  ${line}`);
      line = '';
    }
    line = line === '' ? item : `${line} ${item}`;
  });
  lines.push(`  ${line}`);
  return `\nFields (--fields, comma-separated; a group stands for its fields):\n${lines.join('\n')}\n`;
}
