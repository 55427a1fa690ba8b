/**
 * The OpenID Connect providers that `netintel serve --oidc-config FILE` (or
 * NETINTEL_OIDC_CONFIG) offers for "log in with ...". The file is JSON:
 *
 *   { "providers": [
 *       { "id": "google", "preset": "google", "clientId": "...", "clientSecretEnv": "GOOGLE_SECRET" },
 *       { "id": "microsoft", "preset": "microsoft", "tenant": "consumers", "clientId": "...", "clientSecret": "..." },
 *       { "id": "corp", "name": "Corp SSO", "issuer": "https://sso.corp.example", "clientId": "...", "clientSecret": "..." } ] }
 *
 * Every mistake is a `usage` error of one line that names the file and the
 * field; a secret's value never appears in one. docs/oidc.md is the guide.
 */

import { readBoundedFileSync } from '../read-file-bounded.js';
import { NetintelError } from '../errors.js';

export type OidcPreset = 'google' | 'microsoft';

export interface OidcProviderConfig {
  /** Lowercase [a-z0-9-]{1,32}: the `<id>` in `/login/<id>` and `/login/<id>/callback`. */
  id: string;
  /** What the login button says. */
  name: string;
  /** The Issuer Identifier that discovery starts from (OpenID Connect Discovery 1.0 §4). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The preset the entry used, if any: it decides which claims may vouch for an e-mail address. */
  preset: OidcPreset | null;
}

const ID_PATTERN = /^[a-z0-9-]{1,32}$/;
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
// A Microsoft Entra tenant: one of the three audiences, a directory (tenant) id, or one of its verified domain names.
const TENANT_PATTERN = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)$/i;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const MAX_NAME_LENGTH = 64;
const MAX_CREDENTIAL_LENGTH = 4096;

const FIELDS = new Set(['id', 'name', 'preset', 'tenant', 'issuer', 'clientId', 'clientSecret', 'clientSecretEnv']);

const PRESETS: Record<OidcPreset, { name: string; issuer: (tenant: string) => string }> = {
  google: { name: 'Google', issuer: () => 'https://accounts.google.com' },
  // The v2.0 endpoint of the tenant. For `common` and `organizations` Microsoft's discovery document
  // names the issuer `https://login.microsoftonline.com/{tenantid}/v2.0`; see docs/oidc.md for how
  // openid-client checks ID tokens against that template.
  microsoft: { name: 'Microsoft', issuer: (tenant) => `https://login.microsoftonline.com/${encodeURIComponent(tenant)}/v2.0` },
};

/** The largest OIDC config file read, in bytes: 1 MiB, far above a list of providers. */
export const OIDC_CONFIG_MAX_BYTES = 1024 * 1024;

/**
 * Reads and checks the file given by `--oidc-config` / NETINTEL_OIDC_CONFIG.
 *
 * @throws NetintelError `usage` naming the file: it cannot be read, is
 *   larger than {@link OIDC_CONFIG_MAX_BYTES}, or is not a valid config.
 */
export function loadOidcConfig(path: string, env: NodeJS.ProcessEnv = process.env): OidcProviderConfig[] {
  const text = readBoundedFileSync(path, { maxBytes: OIDC_CONFIG_MAX_BYTES, what: 'OIDC config file', hint: 'check the path given to --oidc-config or NETINTEL_OIDC_CONFIG' }).toString('utf8');
  return parseOidcConfigText(text, path, env);
}

/** Parses the text of an OIDC config file; `source` names the file in error messages. */
export function parseOidcConfigText(text: string, source: string, env: NodeJS.ProcessEnv = process.env): OidcProviderConfig[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new NetintelError('usage', `the OIDC config file ${source} is not valid JSON (${oneLine((error as Error).message)})`, { details: { path: source } });
  }
  return parseOidcConfig(value, source, env);
}

/** Checks a parsed OIDC config value; `source` names the file in error messages. */
export function parseOidcConfig(json: unknown, source: string, env: NodeJS.ProcessEnv = process.env): OidcProviderConfig[] {
  const fail = (field: string, problem: string): never => {
    throw new NetintelError('usage', `the OIDC config file ${source}: ${field} ${problem}`, { details: { path: source, field } });
  };
  if (!isPlainObject(json)) fail('the top level', 'must be an object with a "providers" list');
  const top = json as Record<string, unknown>;
  for (const key of Object.keys(top)) if (key !== 'providers') fail(describeKey(key), 'is not a known field (the top level holds only "providers")');
  const list = top.providers;
  if (!Array.isArray(list)) fail('providers', 'must be a list of providers');
  const entries = list as unknown[];
  if (entries.length === 0) fail('providers', 'is empty (list at least one provider, or leave --oidc-config out)');
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    const provider = parseProvider(entry, `providers[${index}]`, env, fail);
    if (seen.has(provider.id)) fail(`providers[${index}].id`, `${JSON.stringify(provider.id)} is used by an earlier provider (ids must be unique)`);
    seen.add(provider.id);
    return provider;
  });
}

type Fail = (field: string, problem: string) => never;

function parseProvider(entry: unknown, at: string, env: NodeJS.ProcessEnv, fail: Fail): OidcProviderConfig {
  if (!isPlainObject(entry)) return fail(at, 'must be an object');
  const fields = entry as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!FIELDS.has(key)) fail(`${at}.${describeKey(key)}`, `is not a known field (known: ${[...FIELDS].join(', ')})`);
  }

  const id = fields.id;
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) fail(`${at}.id`, 'must be 1 to 32 lowercase letters, digits or hyphens');

  const preset = fields.preset;
  if (preset !== undefined && preset !== 'google' && preset !== 'microsoft') fail(`${at}.preset`, 'must be "google" or "microsoft" (or left out, with "issuer" given)');
  const presetName = (preset ?? null) as OidcPreset | null;

  if (fields.tenant !== undefined && presetName !== 'microsoft') fail(`${at}.tenant`, 'applies only to "preset": "microsoft"');
  let issuer: string;
  if (presetName === null) {
    if (fields.issuer === undefined) fail(`${at}.issuer`, 'is missing (give the issuer URL, or a "preset")');
    issuer = parseIssuer(fields.issuer, `${at}.issuer`, fail);
  } else {
    if (fields.issuer !== undefined) fail(`${at}.issuer`, `cannot be given with "preset": "${presetName}" (the preset sets it)`);
    const tenant = fields.tenant ?? 'common';
    if (typeof tenant !== 'string' || !TENANT_PATTERN.test(tenant) || tenant.length > 253) {
      fail(`${at}.tenant`, 'must be "common", "consumers", "organizations", a tenant id or a verified domain of the tenant');
    }
    issuer = PRESETS[presetName].issuer((tenant as string).toLowerCase());
  }

  const name = fields.name ?? (presetName === null ? id : PRESETS[presetName].name);
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH || CONTROL_CHARACTERS.test(name)) {
    fail(`${at}.name`, `must be 1 to ${MAX_NAME_LENGTH} printable characters`);
  }

  const clientId = fields.clientId;
  if (typeof clientId !== 'string' || !isCredentialText(clientId)) fail(`${at}.clientId`, 'must be the client id the provider issued (a non-empty string)');

  const clientSecret = parseClientSecret(fields, at, env, fail);
  return { id: id as string, name: (name as string).trim(), issuer, clientId: clientId as string, clientSecret, preset: presetName };
}

function parseIssuer(value: unknown, field: string, fail: Fail): string {
  if (typeof value !== 'string') return fail(field, 'must be a URL string');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(field, `${quote(value)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(field, `${quote(value)} must be an https URL`);
  // OpenID Connect Discovery 1.0 §3: an Issuer Identifier has no query or fragment component.
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) fail(field, `${quote(value)} must not have a query or fragment`);
  if (url.username !== '' || url.password !== '') fail(field, 'must not hold a user name or password');
  // Given the discovery document's own URL, openid-client skips the check that the document names this issuer.
  if (url.pathname.includes('/.well-known/')) fail(field, `${quote(value)} is a discovery document URL (give the issuer: the URL before /.well-known/)`);
  return value;
}

function parseClientSecret(fields: Record<string, unknown>, at: string, env: NodeJS.ProcessEnv, fail: Fail): string {
  const { clientSecret, clientSecretEnv } = fields;
  if (clientSecret !== undefined && clientSecretEnv !== undefined) fail(`${at}.clientSecret`, 'and clientSecretEnv cannot both be given (keep one)');
  if (clientSecret !== undefined) {
    if (typeof clientSecret !== 'string' || !isCredentialText(clientSecret)) fail(`${at}.clientSecret`, 'must be a non-empty string');
    return clientSecret as string;
  }
  if (clientSecretEnv === undefined) return fail(`${at}.clientSecret`, 'is missing (give clientSecret, or clientSecretEnv naming an environment variable that holds it)');
  if (typeof clientSecretEnv !== 'string' || !ENV_NAME_PATTERN.test(clientSecretEnv)) fail(`${at}.clientSecretEnv`, 'must be the name of an environment variable (letters, digits, _)');
  const fromEnv = Object.hasOwn(env, clientSecretEnv as string) ? env[clientSecretEnv as string] : undefined;
  if (fromEnv === undefined || fromEnv === '') fail(`${at}.clientSecretEnv`, `names ${clientSecretEnv as string}, which is not set (export it before starting netintel serve)`);
  if (!isCredentialText(fromEnv as string)) fail(`${at}.clientSecretEnv`, `names ${clientSecretEnv as string}, which holds control characters or is too long`);
  return fromEnv as string;
}

function isCredentialText(value: string): boolean {
  return value.length > 0 && value.length <= MAX_CREDENTIAL_LENGTH && !CONTROL_CHARACTERS.test(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field name from the file as it may appear in a message: short, quoted when odd. */
function describeKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(key) ? key : quote(key);
}

function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
