// Spawning and timing the measured processes.
import { spawn } from 'node:child_process';
import { closeSync, createReadStream, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** GNU time, when installed: gives peak RSS and CPU time of a finished process. */
export const GNU_TIME = ['/usr/bin/time'].find((path) => existsSync(path)) ?? null;

/** The environment the measured processes get: ours, minus NODE_EXTRA_CA_CERTS (it slows every Node start). */
export function benchEnv() {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/**
 * Runs a command once and measures its wall time from spawn to exit, in ms.
 * stdout and stderr are kept (up to 1 MiB) for validation.
 */
export function timeOnce(command, args, env) {
  return new Promise((resolve) => {
    const out = [];
    const err = [];
    let outBytes = 0;
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk) => {
      if (outBytes < 1 << 20) out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', (error) => resolve({ ms: NaN, code: null, signal: null, stdout: '', stderr: String(error) }));
    child.on('close', (code, signal) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      resolve({ ms, code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/**
 * Runs `command args` once under GNU time, stdin from the file `stdinPath`
 * (none: nothing) and stdout to the file `stdoutPath`: wall time from spawn
 * to exit, CPU time and peak RSS. Rejects when the command exits non-zero,
 * with the end of its stderr.
 */
export function timedRun(command, args, { env, stdinPath = null, stdoutPath }) {
  return new Promise((resolve, reject) => {
    const timeFile = join(tmpdir(), `netintel-bench-time-${process.pid}-${Math.random().toString(36).slice(2)}.txt`);
    const input = stdinPath === null ? 'ignore' : openSync(stdinPath, 'r');
    const output = openSync(stdoutPath, 'w');
    const started = process.hrtime.bigint();
    const child = spawn(GNU_TIME, ['-f', '%e %U %S %M %x', '-o', timeFile, command, ...args], { env, stdio: [input, output, 'pipe'] });
    if (input !== 'ignore') closeSync(input);
    closeSync(output);
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4096)));
    child.on('error', reject);
    child.on('close', () => {
      const wallS = Number(process.hrtime.bigint() - started) / 1e9;
      const last = readFileSync(timeFile, 'utf8').trim().split('\n').pop();
      rmSync(timeFile, { force: true });
      const [, userS, sysS, maxRssKb, exitStatus] = last.split(/\s+/).map(Number);
      if (exitStatus !== 0) reject(new Error(`${command} ${args.join(' ')} exited ${exitStatus}: ${stderr.trim()}`));
      else resolve({ wallS, cpuS: userS + sysS, peakRssMb: maxRssKb / 1024 });
    });
  });
}

/** Peak RSS so far (VmHWM, kB) of a live process, or null. */
function vmHwmKb(pid) {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** The first child of a live process (the command GNU time runs), or null. */
function firstChildPid(pid) {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return children.length > 0 ? Number(children[0]) : null;
  } catch {
    return null;
  }
}

/**
 * Runs a bulk command: pipes `inputFile` into its stdin, counts the lines and
 * bytes of its stdout, measures wall time, CPU time and peak RSS (GNU time
 * when installed, and polling /proc/PID/status VmHWM either way), and stops
 * it with SIGTERM after `deadlineMs` (the result is then marked truncated and
 * the lines counted so far still give a throughput).
 */
export function runBulk({ command, args, env, inputFile, deadlineMs }) {
  return new Promise((resolve) => {
    const timeFile = join(tmpdir(), `netintel-bench-time-${process.pid}-${Date.now()}.txt`);
    const [file, argv] = GNU_TIME ? [GNU_TIME, ['-f', '%e %U %S %M %x', '-o', timeFile, command, ...args]] : [command, args];
    const started = process.hrtime.bigint();
    const child = spawn(file, argv, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let lines = 0;
    let bytes = 0;
    let stderr = '';
    let polledPeakKb = null;
    let targetPid = GNU_TIME ? null : child.pid;
    let truncated = false;

    const input = createReadStream(inputFile, { highWaterMark: 1 << 20 });
    input.pipe(child.stdin);
    child.stdin.on('error', () => {}); // EPIPE when the process stops early
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length;
      let at = -1;
      while ((at = chunk.indexOf(10, at + 1)) !== -1) lines++;
    });
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-16384);
    });

    const poll = () => {
      targetPid ??= firstChildPid(child.pid);
      if (targetPid === null) return;
      const kb = vmHwmKb(targetPid);
      if (kb !== null && (polledPeakKb === null || kb > polledPeakKb)) polledPeakKb = kb;
    };
    const poller = setInterval(poll, 50);
    const deadline = setTimeout(() => {
      truncated = true;
      poll();
      try {
        process.kill(targetPid ?? child.pid, 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
    }, deadlineMs);

    child.on('error', (error) => {
      clearInterval(poller);
      clearTimeout(deadline);
      resolve({ error: String(error) });
    });
    child.on('close', (code, signal) => {
      const wallS = Number(process.hrtime.bigint() - started) / 1e9;
      clearInterval(poller);
      clearTimeout(deadline);
      input.destroy();
      let gnu = null;
      if (GNU_TIME) {
        try {
          // With -o, a line "Command exited with non-zero status N" or
          // "Command terminated by signal N" may come before the format line.
          const last = readFileSync(timeFile, 'utf8').trim().split('\n').pop();
          const [elapsedS, userS, sysS, maxRssKb, exitStatus] = last.split(/\s+/).map(Number);
          gnu = { elapsedS, userS, sysS, maxRssKb, exitStatus };
        } catch {
          gnu = null;
        }
        rmSync(timeFile, { force: true });
      }
      resolve({
        wallS,
        userS: gnu?.userS ?? null,
        sysS: gnu?.sysS ?? null,
        peakRssKb: gnu?.maxRssKb ?? polledPeakKb,
        peakRssSource: gnu ? 'GNU time %M' : 'VmHWM polled every 50 ms',
        polledPeakKb,
        exitCode: gnu ? gnu.exitStatus : code,
        signal,
        truncated,
        lines,
        bytes,
        stderrTail: stderr.trim().split('\n').slice(-3).join('\n'),
      });
    });
  });
}
