import type { Command, CommanderError } from 'commander';

/**
 * Commander's parse errors (`error: unknown option '--colour'\n(Did you mean
 * --color?)`) in netintel's voice: `<what> (<how to fix>)`, the hint naming
 * the help of the command that refused the arguments.
 */
export function usageErrorMessage(error: CommanderError, command: Command | undefined): string {
  const path = command === undefined ? 'netintel' : commandPath(command);
  const [first = '', ...rest] = error.message.replace(/^error: /, '').split('\n');
  // Commander's suggestion follows on its own line: `(Did you mean ip?)`.
  const suggestion = /^\(Did you mean (.+)\?\)$/.exec(rest.join(' ').trim())?.[1];
  const what = first.replace(/\.$/, '');
  const didYouMean = suggestion === undefined ? '' : `did you mean ${suggestion}?; `;
  switch (error.code) {
    case 'commander.unknownCommand':
      return `${what} (${didYouMean}run ${path} --help for the commands)`;
    case 'commander.unknownOption':
      return `${what} (${didYouMean}run ${path} --help for the options)`;
    case 'commander.missingArgument':
    case 'commander.excessArguments':
      return `${what.replace(/\. Expected (\d+) arguments? but got (\d+)$/, ': expected $1, got $2')} (usage: ${usageLine(command, path)})`;
    case 'commander.optionMissingArgument':
      return `${what} (give it a value; run ${path} --help for the options)`;
    case 'commander.missingMandatoryOptionValue': {
      // `required option '--email <address>' not specified`: the fix is the option itself.
      const option = /'([^']+)'/.exec(what)?.[1];
      return `${what} (add ${option ?? 'it'}; run ${path} --help for the options)`;
    }
    case 'commander.invalidArgument': {
      // `option '-f, --format <format>' argument 'x' is invalid. Allowed choices are a, b.`: the reason is the fix.
      const [head, ...reason] = first.split('. ');
      const fix = reason.join('. ').replace(/\.$/, '').replace(/^Allowed choices are /, 'choose one of: ');
      return fix === '' ? `${head!.replace(/\.$/, '')} (run ${path} --help for the options)` : `${head} (${fix})`;
    }
    default:
      return `${what} (run ${path} --help for usage)`;
  }
}

/** `netintel data update` for the command `update` under `data`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** The command's usage line, as its help starts (`netintel smtp [options] <host>`). */
function usageLine(command: Command | undefined, path: string): string {
  return command === undefined ? `${path} --help` : `${path} ${command.usage()}`;
}
