import type { EngineContext } from './context.js';

/**
 * What a slow operation is waiting on, reported through `ctx.onStage` so a
 * front end can show it (the CLI's spinner). The engine reports facts only;
 * the wording is the front end's.
 *
 * - `dns`: a DNS question; target the name, detail the record type (`MX`)
 * - `smtp`: an SMTP stage; target `host:port`, detail the stage
 *   (`connect`, `greeting`, `EHLO`, `STARTTLS`, `TLS`, `AUTH`, `MAIL FROM`, `RCPT TO`)
 * - `mta-sts`: fetching an MTA-STS policy; target the policy host
 * - `https`: fetching a document a record points to; target the URL, detail what it is (`BIMI logo`)
 * - `blacklist`: asking DNS blocklists; target the address or domain, detail the number of lists
 */
export type StageKind = 'dns' | 'smtp' | 'mta-sts' | 'https' | 'blacklist' | 'tls';

export interface Stage {
  kind: StageKind;
  target: string;
  detail: string | null;
}

/** Tells the context's listener, if any, that a stage begins. A listener that throws does not stop the work. */
export function reportStage(ctx: Pick<EngineContext, 'onStage'>, kind: StageKind, target: string, detail: string | null = null): void {
  if (!ctx.onStage) return;
  try {
    ctx.onStage({ kind, target, detail });
  } catch {
    // Progress display is best effort: the lookup's answer matters more.
  }
}
