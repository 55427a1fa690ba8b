import { Argument, type Command } from 'commander';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from '../cli/completion-scripts.js';
import type { CommandRuntime } from '../cli/runtime.js';

/** `netintel completion bash|zsh|fish`: prints the shell's completion script, generated from the program. */
export function registerCompletionCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('completion')
    .description('print the tab-completion script of a shell (commands, options, -f values, --fields names)')
    .addArgument(new Argument('<shell>', 'the shell').choices(COMPLETION_SHELLS))
    .addHelpText(
      'after',
      [
        '',
        'Install:',
        '  bash: source <(netintel completion bash)                  # in ~/.bashrc',
        '  zsh:  netintel completion zsh > "${fpath[1]}/_netintel"   # a directory of $fpath; then restart zsh',
        '  fish: netintel completion fish > ~/.config/fish/completions/netintel.fish',
      ].join('\n'),
    )
    .action((shell: CompletionShell) => {
      runtime.io.stdout.write(completionScript(shell, program));
    });
}
