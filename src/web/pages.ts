import { PASSWORD_MAX_BYTES, PASSWORD_MIN_BYTES } from '../accounts/passwords.js';
import type { Plan } from '../keys/plans.js';
import type { AccountRecord } from '../store/account-store.js';
import type { ApiKeyRecord } from '../store/key-store.js';
import { html, type Html } from './html.js';
import { csrfField, field, message, page, type Frame } from './layout.js';

export interface Provider {
  id: string;
  name: string;
}

type Base = Pick<Frame, 'csrf' | 'signedIn'>;

const PASSWORD_HINT = `${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} characters; a phrase of several words is good.`;

function providerLinks(providers: readonly Provider[], verb: string): Html {
  if (providers.length === 0) return html``;
  return html`<div class="providers">${providers.map((provider) => html`<a class="button secondary" href="/login/${provider.id}">${verb} with ${provider.name}</a>`)}</div>
<p class="or">or with your e-mail address</p>`;
}

export function signUpPage(base: Base, options: { providers: readonly Provider[]; email?: string; errors?: { email?: string; password?: string } }): string {
  const errors = options.errors ?? {};
  return page(
    { ...base, title: 'Sign up', narrow: true },
    html`<h1>Create a free account</h1>
<p>An account gives you API keys with higher limits and the network and security fields.</p>
${errors.email || errors.password ? message('error', 'Please correct the fields marked below.') : ''}
${providerLinks(options.providers, 'Sign up')}
<form method="post" action="/signup" novalidate>
${csrfField(base.csrf)}
${field({ name: 'email', label: 'E-mail address', type: 'email', autocomplete: 'email', value: options.email ?? '', error: errors.email, autofocus: true, maxlength: 254 })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: PASSWORD_HINT, error: errors.password })}
<button type="submit">Create account</button>
</form>
<p>Have an account? <a href="/login">Log in</a>.</p>`,
  );
}

/** The same page whether or not the address had an account: the answer must not tell. */
export function checkMailPage(base: Base, options: { email: string; what: 'verify' | 'reset' }): string {
  const text =
    options.what === 'verify'
      ? html`<p>We sent a message to <strong>${options.email}</strong>. Open the link in it to verify your address; it works for 24 hours.</p>
<p>If the address already has an account, the message says so and how to get in.</p>`
      : html`<p>If <strong>${options.email}</strong> has an account, we sent it a link to choose a new password. It works for one hour, once.</p>`;
  return page(
    { ...base, title: 'Check your e-mail', narrow: true },
    html`<h1>Check your e-mail</h1>
${text}
<p>Nothing arrived after a few minutes? Look in the spam folder, or <a href="${options.what === 'verify' ? '/signup' : '/forgot'}">try again</a>.</p>`,
  );
}

export function logInPage(base: Base, options: { providers: readonly Provider[]; email?: string; error?: string; notice?: Html | string }): string {
  return page(
    { ...base, title: 'Log in', narrow: true },
    html`<h1>Log in</h1>
${options.notice ? message('ok', options.notice) : ''}
${options.error ? message('error', options.error) : ''}
${providerLinks(options.providers, 'Log in')}
<form method="post" action="/login">
${csrfField(base.csrf)}
${field({ name: 'email', label: 'E-mail address', type: 'email', autocomplete: 'username', value: options.email ?? '', autofocus: !options.email, maxlength: 254 })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', autofocus: Boolean(options.email) })}
<button type="submit">Log in</button>
</form>
<p><a href="/forgot">Forgotten your password?</a></p>
<p>No account yet? <a href="/signup">Sign up</a>; it is free.</p>`,
  );
}

/** The page of a mailed link: a button does the work, because mail scanners open links (GET) on their own. */
export function confirmLinkPage(base: Base, options: { token: string; what: 'verify' | 'reset'; email: string; error?: string }): string {
  if (options.what === 'verify') {
    return page(
      { ...base, title: 'Verify your address', narrow: true },
      html`<h1>Verify your e-mail address</h1>
<p>Confirm that <strong>${options.email}</strong> is yours.</p>
<form method="post" action="/verify">
${csrfField(base.csrf)}<input type="hidden" name="token" value="${options.token}">
<button type="submit" autofocus>Verify my address</button>
</form>`,
    );
  }
  return page(
    { ...base, title: 'Choose a new password', narrow: true },
    html`<h1>Choose a new password</h1>
<p>For the account <strong>${options.email}</strong>.</p>
${options.error ? message('error', 'Please correct the field marked below.') : ''}
<form method="post" action="/reset" novalidate>
${csrfField(base.csrf)}<input type="hidden" name="token" value="${options.token}">
${field({ name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', hint: PASSWORD_HINT, error: options.error, autofocus: true })}
<button type="submit">Set password</button>
</form>
<p>Setting a new password logs you out everywhere else.</p>`,
  );
}

export function linkNotValidPage(base: Base, what: 'verify' | 'reset'): string {
  return page(
    { ...base, title: 'Link not valid', narrow: true },
    html`<h1>This link does not work any more</h1>
${message('error', 'The link was used already, has expired, was replaced by a newer one, or was not made here. Only the newest link we sent works.')}
<p>${
      what === 'verify'
        ? html`Log in and ask for a new verification message from the dashboard, or <a href="/signup">sign up</a> again.`
        : html`<a href="/forgot">Ask for a new link</a>; it works for one hour.`
    }</p>`,
  );
}

export function forgotPage(base: Base, options: { email?: string; error?: string } = {}): string {
  return page(
    { ...base, title: 'Forgotten password', narrow: true },
    html`<h1>Forgotten password</h1>
<p>We will send a link to choose a new password to the address of your account.</p>
<form method="post" action="/forgot" novalidate>
${csrfField(base.csrf)}
${field({ name: 'email', label: 'E-mail address', type: 'email', autocomplete: 'email', value: options.email ?? '', error: options.error, autofocus: true, maxlength: 254 })}
<button type="submit">Send the link</button>
</form>
<p><a href="/login">Back to log in</a></p>`,
  );
}

export interface KeyRow {
  record: ApiKeyRecord;
  /** Lookups charged to the key today and this month (UTC), as written so far. */
  today: number;
  month: number;
}

export interface DashboardView {
  account: AccountRecord;
  plan: Plan;
  keys: readonly KeyRow[];
  /** The server's public address, for the curl example. */
  publicUrl: string;
  /** Sessions of the account that are open (this one included). */
  sessions: number;
  /** A key just made: shown this once. */
  newKey?: { key: string; label: string | null };
  notice?: string;
  error?: string;
  /** What is wrong with the password change just tried. */
  passwordError?: string;
}

const count = (value: number) => value.toLocaleString('en-US');
const moment = (iso: string | null) => (iso === null ? 'never' : html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`);
const day = (iso: string | null) => (iso === null ? 'never' : html`<time datetime="${iso}" title="${iso.slice(0, 16).replace('T', ' ')} UTC">${iso.slice(0, 10)}</time>`);

export function dashboardPage(base: Base, view: DashboardView): string {
  const { account, plan } = view;
  const verified = account.email_verified_at !== null;
  const curlKey = view.newKey ? view.newKey.key : '$NETINTEL_KEY';
  const curl = `curl -H "X-API-Key: ${curlKey}" '${view.publicUrl}/api/ipinfo?ip=8.8.8.8'`;
  const usageCell = (label: string, value: number, limit: number | null) =>
    html`<td class="number" data-label="${label}"><span>${count(value)}${limit === null ? '' : html` <span class="hint">of ${count(limit)}</span>`}</span></td>`;
  return page(
    { ...base, title: 'Dashboard', script: true },
    html`<h1>Dashboard</h1>
${view.notice ? message('ok', view.notice) : ''}
${view.error ? message('error', view.error) : ''}
${
  verified
    ? ''
    : html`${message('note', html`Verify your e-mail address to make API keys: open the link we sent to <strong>${account.email}</strong>.`)}
<form method="post" action="/verify/resend">${csrfField(base.csrf)}<button class="secondary" type="submit">Send the link again</button></form>`
}
${
  view.newKey
    ? html`<section aria-labelledby="new-key">
<h2 id="new-key">Your new key${view.newKey.label ? html` &ldquo;${view.newKey.label}&rdquo;` : ''}</h2>
${message('note', 'Copy it now: it is shown only this once. netintel keeps only a hash of it.')}
<code class="secret" id="new-key-value">${view.newKey.key}</code>
<button class="secondary copy" type="button" data-copy="new-key-value" hidden>Copy key</button>
</section>`
    : ''
}
<section aria-labelledby="account">
<h2 id="account">Account</h2>
<dl class="facts">
<dt>E-mail</dt><dd>${account.email}${verified ? ' (verified)' : ' (not verified)'}</dd>
<dt>Plan</dt><dd>${plan.title} <code>${plan.name}</code></dd>
<dt>Allowances</dt><dd>${count(plan.daily)} lookups a day (UTC), bursts of ${count(plan.burst)}, refilled at ${count(plan.perMinute)} a minute</dd>
<dt>Includes</dt><dd>${plan.features.length > 0 ? plan.features.map((feature) => (feature === 'premium' ? 'network and security fields' : 'bulk lookups')).join(', ') : 'basic geolocation'}</dd>
</dl>
<p class="hint">Plans are changed by the operator of this server. Commercial use needs a paid plan.</p>
</section>
<section aria-labelledby="keys">
<h2 id="keys">API keys</h2>
${
  view.keys.length === 0
    ? html`<p>No keys yet.</p>`
    : html`<div class="table-wrap"><table class="keys">
<caption class="visually-hidden">Your API keys with their use today and this month</caption>
<thead><tr><th scope="col">Label</th><th scope="col">Key id</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col" class="number">Today</th><th scope="col" class="number">This month</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>
${view.keys.map(
  (row) => html`<tr>
<td data-label="Label">${row.record.label ?? html`<span class="hint">none</span>`}</td>
<td data-label="Key id"><code>${row.record.id}</code></td>
<td data-label="Created">${day(row.record.created_at)}</td>
<td data-label="Last used">${moment(row.record.last_used_at)}</td>
${usageCell('Today', row.today, plan.daily)}
${usageCell('This month', row.month, null)}
<td data-label="Status">${
    row.record.revoked_at === null
      ? html`<form method="post" action="/dashboard/keys/${row.record.id}/revoke">${csrfField(base.csrf)}<button class="secondary" type="submit" aria-label="Revoke key ${row.record.label ?? row.record.id}">Revoke</button></form>`
      : html`<span class="revoked">revoked ${day(row.record.revoked_at)}</span>`
  }</td>
</tr>`,
)}
</tbody></table></div>
<p class="hint">Use is counted per UTC day and written every few seconds.</p>`
}
${
  verified
    ? html`<form method="post" action="/dashboard/keys" class="inline-form">
${csrfField(base.csrf)}
<div>${field({ name: 'label', label: 'Label for a new key', type: 'text', autocomplete: 'off', hint: 'Where you will use it, e.g. "cron on web-1".', required: false, maxlength: 64 })}</div>
<button type="submit">Create key</button>
</form>`
    : ''
}
</section>
<section aria-labelledby="try">
<h2 id="try">Try it</h2>
<pre id="curl-example">${curl}</pre>
<button class="secondary copy" type="button" data-copy="curl-example" hidden>Copy command</button>
<p>The key goes in the <code>X-API-Key</code> header. Every endpoint is described in the <a href="/docs">API docs</a>.</p>
</section>
<section aria-labelledby="security">
<h2 id="security">Password and sessions</h2>
${
  account.has_password
    ? html`${view.passwordError ? message('error', 'Please correct the fields marked below.') : ''}
<form method="post" action="/account/password" novalidate>
${csrfField(base.csrf)}
${field({ name: 'current', label: 'Current password', type: 'password', autocomplete: 'current-password' })}
${field({ name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', hint: `${PASSWORD_HINT} Every other session is logged out.`, error: view.passwordError })}
<button type="submit" class="secondary">Change password</button>
</form>`
    : html`<p>This account signs in through another provider and has no password.</p>`
}
<p>${view.sessions === 1 ? 'This is the only session open.' : `${count(view.sessions)} sessions are open, this one included.`}</p>
<form method="post" action="/logout/everywhere">${csrfField(base.csrf)}<button class="secondary" type="submit">Log out everywhere</button></form>
</section>
<section aria-labelledby="danger">
<h2 id="danger">Delete the account</h2>
<p><a href="/account/delete">Delete this account and all of its keys</a>.</p>
</section>`,
  );
}

export function deleteAccountPage(base: Base, options: { account: AccountRecord; error?: string }): string {
  const { account } = options;
  return page(
    { ...base, title: 'Delete the account', narrow: true },
    html`<h1>Delete the account</h1>
<p>This deletes <strong>${account.email}</strong> and every key it has, at once: requests with those keys are refused from then on. It cannot be undone.</p>
${options.error ? message('error', options.error) : ''}
<form method="post" action="/account/delete" novalidate>
${csrfField(base.csrf)}
${
  account.has_password
    ? field({ name: 'password', label: 'Your password, to confirm', type: 'password', autocomplete: 'current-password', autofocus: true })
    : field({ name: 'email', label: 'Type your e-mail address to confirm', type: 'email', autocomplete: 'off', autofocus: true })
}
<button class="danger" type="submit">Delete account and keys</button>
</form>
<p><a href="/dashboard">Keep the account</a></p>`,
  );
}

export function messagePage(base: Base, options: { title: string; text: Html | string; kind?: 'ok' | 'error' | 'note'; next?: { href: string; label: string } }): string {
  return page(
    { ...base, title: options.title, narrow: true },
    html`<h1>${options.title}</h1>
${message(options.kind ?? 'ok', options.text)}
${options.next ? html`<p><a href="${options.next.href}">${options.next.label}</a></p>` : ''}`,
  );
}
