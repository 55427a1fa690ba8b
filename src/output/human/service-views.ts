import { factList, headline, sections, type Fact } from './blocks.js';
import type { ViewContext } from './style.js';
import { grouped, type HumanView } from './view.js';

interface DataSource {
  name: string;
  type: string | null;
  origin: string | null;
  updated: string | null;
  age_days: number | null;
  entries: number | null;
  licence: string | null;
  stale: boolean | null;
  warning: string | null;
  path: string | null;
  url: string | null;
}

/** `142 days old`, `(stale)` past the dataset's refresh age. */
function ageText(source: DataSource): string {
  if (source.age_days === null) return '';
  return `${Math.floor(source.age_days)} days old${source.stale ? ' (stale)' : ''}`;
}

export const DATA_STATUS_VIEW: HumanView = {
  block: (ctx: ViewContext, value: unknown) => {
    const source = value as DataSource;
    const facts: Fact[] = [
      ['origin', source.origin ?? 'not installed'],
      ['updated', source.updated],
      ['age', ageText(source)],
      ['entries', source.entries === null ? null : grouped(source.entries)],
      ['licence', source.licence],
      ['path', source.path],
      ['warning', source.warning],
    ];
    return sections(headline(ctx, source.name, source.origin === null ? 'not installed' : source.stale ? 'stale' : 'current', source.stale ? 'warn' : 'plain'), factList(ctx, facts));
  },
  table: {
    columns: [
      { header: 'dataset', priority: 0 },
      { header: 'origin', priority: 1 },
      { header: 'age', priority: 2 },
      { header: 'entries', priority: 3 },
      { header: 'licence', priority: 4, wrap: true },
      { header: 'updated', priority: 5 },
    ],
    cells: (value) => {
      const source = value as DataSource;
      return [source.name, source.origin ?? 'not installed', ageText(source), source.entries === null ? '' : grouped(source.entries), source.licence ?? '', source.updated?.slice(0, 10) ?? ''];
    },
    key: (value) => (value as DataSource).name,
  },
};

interface ApiKey {
  id: string;
  key: string | null;
  plan: string;
  label: string | null;
  limits: { daily: number | null; per_minute: number | null; burst: number | null; batch: number | null } | null;
  created_at: string;
  revoked_at: string | null;
  /** Null for a key no request has used. */
  last_used_at: string | null;
}

export const API_KEY_VIEW: HumanView = {
  block: (ctx, value) => {
    const key = value as ApiKey;
    const limits = key.limits ?? { daily: null, per_minute: null, burst: null, batch: null };
    const facts: Fact[] = [
      ['key', key.key],
      ['plan', key.plan],
      ['label', key.label],
      ['daily limit', limits.daily === null ? 'none' : grouped(limits.daily)],
      ['per minute', limits.per_minute === null ? null : `${grouped(limits.per_minute)} (burst ${limits.burst ?? '-'})`],
      ['batch', limits.batch],
      ['created', key.created_at],
      ['last used', key.last_used_at ?? 'never'],
      ['revoked', key.revoked_at],
    ];
    return sections(headline(ctx, `key ${key.id}`, key.revoked_at ? 'revoked' : 'active', key.revoked_at ? 'warn' : 'good'), factList(ctx, facts));
  },
  table: {
    columns: [
      { header: 'id', priority: 0 },
      { header: 'plan', priority: 0 },
      { header: 'label', priority: 2, wrap: true },
      { header: 'created', priority: 1 },
      { header: 'last used', priority: 1 },
      { header: 'revoked', priority: 3 },
    ],
    cells: (value) => {
      const key = value as ApiKey;
      return [key.id, key.plan, key.label ?? '', key.created_at, key.last_used_at ?? 'never', key.revoked_at ?? ''];
    },
    key: (value) => (value as ApiKey).id,
  },
};

interface Quota {
  plan: string;
  title: string | null;
  key_id: string | null;
  client: string | null;
  features: string[] | null;
  daily: { limit: number | null; remaining: number | null; reset_at: string | null };
  burst: { capacity: number | null; remaining: number | null; per_minute: number | null };
  batch: number | null;
  bulk_max: number | null;
}

export const QUOTA_VIEW: HumanView = {
  block: (ctx, value) => {
    const quota = value as Quota;
    const { daily, burst } = quota;
    const facts: Fact[] = [
      ['key', quota.key_id],
      ['client', quota.client],
      ['today', daily.limit === null ? 'no daily limit' : `${grouped(daily.remaining ?? 0)} of ${grouped(daily.limit)} requests left${daily.reset_at ? `, resets ${daily.reset_at}` : ''}`],
      // What is left of the burst changes by the second: its size and refill rate are what to plan by.
      ['burst', burst.capacity === null ? null : `${grouped(burst.capacity)} requests${burst.per_minute === null ? '' : `, refilled at ${grouped(burst.per_minute)} a minute`}`],
      ['batch', quota.batch === null ? null : `${grouped(quota.batch)} targets a request`],
      ['bulk', quota.bulk_max === null ? null : `${grouped(quota.bulk_max)} addresses a request`],
      ['features', quota.features && quota.features.length > 0 ? quota.features.join(', ') : null],
    ];
    const low = daily.limit !== null && daily.remaining !== null && daily.remaining === 0;
    return sections(headline(ctx, `plan ${quota.plan}${quota.title ? ` (${quota.title})` : ''}`, low ? 'daily quota used up' : '', low ? 'bad' : 'plain'), factList(ctx, facts));
  },
  table: {
    columns: [
      { header: 'plan', priority: 0 },
      { header: 'key', priority: 1 },
      { header: 'today', priority: 0, wrap: true },
    ],
    cells: (value) => {
      const quota = value as Quota;
      return [quota.plan, quota.key_id ?? '', quota.daily.limit === null ? 'no limit' : `${quota.daily.remaining ?? 0} of ${quota.daily.limit} left`];
    },
    key: (value) => (value as Quota).plan,
  },
};
