/**
 * Selectors probed when none is given. DNS offers no way to list the
 * selectors of a domain (RFC 6376 §3.1: the selector is chosen by the
 * signer and only appears in the signatures it makes), so this is a guess
 * at the names that mail providers and common software set up by default.
 * Selectors made of random tokens or dates (Amazon SES Easy DKIM, Postmark,
 * HubSpot, Google's own `20230601`) cannot be guessed and are not listed.
 */
export const COMMON_DKIM_SELECTORS: readonly string[] = [
  // Google Workspace: the default prefix of the key generated in the admin console.
  'google',
  // Microsoft 365 / Exchange Online: two CNAMEs to <selector>-<domain>._domainkey.<tenant>.onmicrosoft.com.
  'selector1',
  'selector2',
  // Mailchimp: k2 and k3 CNAMEs to dkim2.mcsv.net and dkim3.mcsv.net; k1 (dkim.mcsv.net) in older set-ups.
  'k1',
  'k2',
  'k3',
  // Mailchimp Transactional (Mandrill).
  'mandrill',
  // SendGrid automated security: s1 and s2 CNAMEs into sendgrid.net; smtpapi in older accounts.
  's1',
  's2',
  'smtpapi',
  // Mailgun's default selectors of the domain set-up screen over the years.
  'smtp',
  'mailo',
  'krs',
  'pic',
  // Mailjet.
  'mailjet',
  // Zoho Mail: the selector name suggested in its DKIM set-up.
  'zoho',
  'zmail',
  // Fastmail: fm1 to fm3 CNAMEs to dkim.fmhosted.com.
  'fm1',
  'fm2',
  'fm3',
  // Proton Mail: three CNAMEs into domainkey.*.protonmail.ch.
  'protonmail',
  'protonmail2',
  'protonmail3',
  // iCloud Mail with a custom domain.
  'sig1',
  // Migadu.
  'key1',
  'key2',
  'key3',
  // Zendesk.
  'zendesk1',
  'zendesk2',
  // Constant Contact.
  'ctct1',
  'ctct2',
  // Campaign Monitor.
  'cm',
  // Everlytic, and MXVault (listed beside it by DMARC tools).
  'everlytickey1',
  'everlytickey2',
  'mxvault',
  // Self-hosted software: cPanel, Plesk and DirectAdmin use "default"; OpenDKIM and rspamd guides use "mail" and "dkim".
  'default',
  'dkim',
  'mail',
  'email',
];
