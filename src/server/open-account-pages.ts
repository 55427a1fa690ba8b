import type { MailSenderOptions } from '../accounts/mail-sender.js';
import type { Store } from '../store/open-store.js';
import type { AccountPagesDeps } from '../web/account-pages.js';
import type { OidcLogin } from '../web/oidc.js';

/** How the account pages send mail and where they are reached (`netintel serve`'s flags and variables). */
export interface AccountPagesSettings {
  /** The address people reach the server at (an http or https origin), when one is given; else links use the listening address. */
  publicUrl?: string | undefined;
  /** The mail relay, smtp[s]://user:password@host:port; without one, each message is an .eml file in `outboxDir`. */
  smtpUrl?: string | undefined;
  outboxDir: string;
  /** The From address of the mail. */
  from: string;
  /**
   * Opens the log-in with OpenID Connect providers (reads their file), when
   * any are configured. Called before the mailer is made: a mistake in the
   * file stops the start before anything else is opened.
   */
  openSocialLogin?: (() => Promise<OidcLogin>) | undefined;
}

/** The account pages' parts, open: what buildServer takes, what the start-up log says of them, and how to close them. */
export interface OpenedAccountPages {
  /** The public URL given, if any. */
  publicUrl: string | undefined;
  /** Where the mail goes, for the log: the relay (without its password) or the outbox directory. */
  mail: { relay: string; from: string } | { outbox: string; from: string };
  /** The ids of the social log-in providers. */
  social: string[];
  deps: Omit<AccountPagesDeps, 'keys' | 'plans' | 'limits' | 'now'>;
  /** Stops the mail sender (after the message it is sending) and the mailer. */
  close(): Promise<void>;
}

/** What the mail sender tells, and the address links in mail are made of. */
export type AccountPagesEvents = Pick<MailSenderOptions, 'onSent' | 'onFailed' | 'onError'> & { publicUrl: () => string };

/**
 * What the account pages need beyond the API's own parts: the account store
 * (in the key database), the mail sender (through an SMTP relay, else .eml
 * files in the outbox directory) draining the outbox table, the session
 * key, and the social log-in when configured.
 */
export async function openAccountPages(settings: AccountPagesSettings, store: Store, events: AccountPagesEvents): Promise<OpenedAccountPages> {
  const [{ createMailer, redactSmtpUrl, DEFAULT_TIMEOUT_MS }, { createMailSender }, { composeAccountMail }] = await Promise.all([
    import('../accounts/mailer.js'),
    import('../accounts/mail-sender.js'),
    import('../web/mail-messages.js'),
  ]);
  const { publicUrl, smtpUrl, outboxDir, from } = settings;
  // Read first: a mistake in the file stops the start before anything is opened.
  const social = settings.openSocialLogin ? await settings.openSocialLogin() : undefined;
  const mailer = createMailer({ from, ...(smtpUrl ? { smtpUrl } : { outboxDir }) });
  const sessionKey = await store.accounts.sessionKey();
  // A claimed message is this server's for longer than one attempt can take: the relay's timeouts, or a file write.
  const sender = createMailSender(store.outbox, mailer, { ...events, compose: composeAccountMail(store.accounts, events.publicUrl), leaseMs: smtpUrl ? 4 * DEFAULT_TIMEOUT_MS : 5_000 });
  // Messages queued before a restart go now.
  sender.wake();
  return {
    publicUrl,
    mail: smtpUrl ? { relay: redactSmtpUrl(smtpUrl), from } : { outbox: outboxDir, from },
    social: social ? social.providers().map((provider) => provider.id) : [],
    deps: { accounts: store.accounts, mail: sender, sessionKey, https: publicUrl?.startsWith('https:') === true, publicUrl: events.publicUrl, ...(social ? { social } : {}) },
    close: async () => {
      await sender.close();
      mailer.close();
    },
  };
}
