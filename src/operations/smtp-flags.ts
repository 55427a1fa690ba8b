import type { FailOn } from '../cli/fail-on.js';
import type { ProbeSmtpOptions } from '../engine/smtp/probe-smtp.js';
import type { SmtpAuthMechanism, SmtpStage } from '../engine/smtp/smtp-result.js';
import { NetintelError } from '../errors.js';
import { resolveSetting, type Environment, type SettingSources } from '../setting-sources.js';
import type { SettingsKit } from './operation.js';

/** The flags of `netintel smtp`, as commander reads them. */
export interface SmtpFlags {
  port?: string;
  ip?: string;
  tls?: boolean;
  tlsOnConnect?: boolean;
  tlsCa?: string;
  ehlo?: string;
  quitAfter?: SmtpStage;
  greetingTimeout?: string;
  authUser?: string;
  authPass?: string;
  authMechanism?: SmtpAuthMechanism;
  allowPlaintextAuth?: boolean;
  relayTest?: boolean;
  from?: string;
  to?: string;
  ptr?: boolean;
  transcript?: boolean;
  /** Set by --dane (true) or --no-dane (false); undefined: on for port 25. */
  dane?: boolean;
  failOn?: FailOn;
}

/** The credentials of an AUTH test, from their flags or their variables. */
export const SMTP_CREDENTIAL_SETTINGS = {
  user: { flag: '--auth-user', env: 'NETINTEL_SMTP_USER' },
  pass: { flag: '--auth-pass', env: 'NETINTEL_SMTP_PASS' },
} as const satisfies Record<string, SettingSources>;

/** The engine options of the flags; credentials from the flags or NETINTEL_SMTP_USER/PASS. */
export async function probeOptions(flags: SmtpFlags, kit: Pick<SettingsKit, 'env' | 'readCaFile' | 'trustAnchor'>): Promise<Omit<ProbeSmtpOptions, 'host'>> {
  const { parsePort } = await import('../engine/smtp/smtp-input.js');
  const { env } = kit;
  const port = parsePort(flags.port ?? '25');
  const { user, pass } = credentialsOf(flags, env);
  if ((user === undefined) !== (pass === undefined)) {
    throw new NetintelError('usage', user === undefined ? 'a password was given without --auth-user' : '--auth-user needs a password: --auth-pass or NETINTEL_SMTP_PASS');
  }
  if (flags.allowPlaintextAuth && user === undefined) throw new NetintelError('usage', '--allow-plaintext-auth needs --auth-user');
  if (flags.authMechanism && user === undefined) throw new NetintelError('usage', '--auth-mechanism needs --auth-user');
  let greetingTimeoutMs: number | undefined;
  if (flags.greetingTimeout !== undefined) {
    if (!/^\d{1,7}$/.test(flags.greetingTimeout) || Number(flags.greetingTimeout) < 1 || Number(flags.greetingTimeout) > 3_600_000) {
      throw new NetintelError('invalid_input', `--greeting-timeout must be an integer from 1 to 3600000 ms, not ${JSON.stringify(flags.greetingTimeout)}`);
    }
    greetingTimeoutMs = Number(flags.greetingTimeout);
  }
  const daneOn = flags.dane ?? port === 25;
  const trustAnchors = daneOn ? await kit.trustAnchor() : undefined;
  const tlsCa = flags.tlsCa === undefined ? undefined : kit.readCaFile(flags.tlsCa, '--tls-ca');
  const envelope = flags.from !== undefined || flags.to !== undefined ? { ...(flags.from !== undefined ? { from: flags.from } : {}), ...(flags.to !== undefined ? { to: flags.to } : {}) } : undefined;
  return {
    port,
    ...(flags.ip !== undefined ? { address: flags.ip } : {}),
    ...(flags.tls ? { tls: 'required' as const } : flags.tlsOnConnect ? { tls: 'implicit' as const } : {}),
    ...(flags.ehlo !== undefined ? { ehloName: flags.ehlo } : {}),
    ...(flags.quitAfter !== undefined ? { quitAfter: flags.quitAfter } : {}),
    ...(greetingTimeoutMs !== undefined ? { greetingTimeoutMs } : {}),
    ...(user !== undefined && pass !== undefined
      ? { auth: { user, pass, allowPlaintext: flags.allowPlaintextAuth === true, ...(flags.authMechanism ? { mechanism: flags.authMechanism } : {}) } }
      : {}),
    relayTest: flags.relayTest ? (envelope ?? {}) : null,
    ...(!flags.relayTest && envelope ? { envelope } : {}),
    reverseDns: flags.ptr !== false,
    transcript: flags.transcript === true,
    // RFC 7672 concerns MX hosts, reached on port 25; elsewhere DANE is checked when asked for.
    dane: daneOn ? (trustAnchors === undefined ? true : { trustAnchors }) : false,
    ...(tlsCa ? { tlsCa } : {}),
  };
}

/** True when a user and a password are given (flags, or NETINTEL_SMTP_USER/PASS): the probe tests AUTH. */
export function credentialsGiven(flags: SmtpFlags, env: Environment): boolean {
  const { user, pass } = credentialsOf(flags, env);
  return user !== undefined && pass !== undefined;
}

/** The user and the password, each flag > variable (an empty variable counts as unset). */
export function credentialsOf(flags: SmtpFlags, env: Environment): { user: string | undefined; pass: string | undefined } {
  return {
    user: resolveSetting(SMTP_CREDENTIAL_SETTINGS.user, { flag: flags.authUser, env })?.value,
    pass: resolveSetting(SMTP_CREDENTIAL_SETTINGS.pass, { flag: flags.authPass, env })?.value,
  };
}
