import { printAsnResults, printIpRecords, printVpnResults } from '../commands/address-lookups.js';
import { directOptions, readDirectRequest, type DirectCommand, type DirectRequest } from './direct-request.js';
import type { CliIo } from './io.js';
import { debugRequested, guardRun } from './run-guard.js';
import { createRuntime, type CommandRuntime } from './runtime.js';

export { createProcessIo } from './io.js';
export { readDirectRequest } from './direct-request.js';

/**
 * The direct path's entry (src/cli/direct-request.ts says what it takes):
 * bin/load-bundle.js runs it from a bundle of its own, without commander,
 * for the arguments readDirectRequest takes, and the lookup bundle for the
 * rest.
 */

const RUNNERS: Readonly<Record<DirectCommand, typeof printIpRecords>> = { ip: printIpRecords, vpn: printVpnResults, asn: printAsnResults };

/** Runs a request the direct path took, as the CLI runs the command; resolves to the exit code. */
export async function runDirectRequest(request: DirectRequest, processIo: CliIo): Promise<number> {
  // The direct path never takes --debug (readDirectRequest declines it): only NETINTEL_DEBUG applies.
  const run = guardRun(processIo, debugRequested([], processIo.env));
  const { io } = run;
  let runtime: CommandRuntime | undefined;
  let outcome: { code: number } | { error: unknown };
  try {
    const options = directOptions(request, io.env, io.stdout.isTTY === true);
    runtime = createRuntime(io, () => options);
    await RUNNERS[request.command](runtime, options, request.targets);
    outcome = { code: runtime.exitCode };
  } catch (error) {
    outcome = { error };
  }
  try {
    await runtime?.close();
  } catch (error) {
    if ('code' in outcome) outcome = { error };
  }
  return run.finish(outcome, request.values.format as string);
}

/**
 * The other bundles' `main`, for arguments the direct path takes (the code
 * cache writer warms this bundle through it).
 */
export function main(argv: readonly string[], io: CliIo): Promise<number> {
  const request = readDirectRequest(argv, io.env);
  if (request === null) throw new Error(`the direct path does not take ${JSON.stringify(argv)}`);
  return runDirectRequest(request, io);
}
