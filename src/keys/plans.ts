import { readBoundedFileSync } from '../read-file-bounded.js';
import { join } from 'node:path';
import { packageRoot } from '../engine/data/data-files.js';
import { NetintelError } from '../errors.js';

/** What a plan unlocks beyond basic lookups. */
export const PLAN_FEATURES = ['premium', 'bulk'] as const;
/**
 * - `premium`: the network and security groups of the IP record, and GET /api/vpn-check
 *   (the premium fields, ISP details and threat intelligence: docs/api.md, Keys and the free tier);
 * - `bulk`: POST /api/bulk (Pro and Enterprise: docs/api.md, Plans and limits).
 */
export type PlanFeature = (typeof PLAN_FEATURES)[number];

/** The numbers that limit a caller; an enterprise key may carry its own. */
export interface PlanLimits {
  /** Lookups per UTC day; the count resets at 00:00 UTC. */
  daily: number;
  /** Refill rate of the burst bucket, in lookups per minute (may be fractional). */
  perMinute: number;
  /** Capacity of the burst bucket: the most lookups accepted at once. */
  burst: number;
  /** Items per request of the bulk forms (asn-lookup `bulk`, email-tests bulk). */
  batch: number;
}

export interface Plan extends PlanLimits {
  name: string;
  title: string;
  features: readonly PlanFeature[];
}

export interface PlanTable {
  /** The plan of requests without a key. */
  anonymous: string;
  /** The plan of an account made on the sign-up page (and of its keys). */
  newAccounts: string;
  /** The most addresses POST /api/bulk accepts in one request (100: docs/api.md, Endpoints). */
  bulkMax: number;
  plans: Readonly<Record<string, Plan>>;
  /** Where the table was read from. */
  source: string;
}

/** The plans file shipped with netintel (data/plans.json). */
export function defaultPlansPath(): string {
  return join(packageRoot(), 'data', 'plans.json');
}

/** The largest plans file read, in bytes: 1 MiB, far above a table of plans (data/plans.json is about a kilobyte). */
export const PLANS_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Reads and checks a plans file.
 *
 * @throws NetintelError `usage` naming the file and the first problem found
 *   (it cannot be read, is larger than {@link PLANS_FILE_MAX_BYTES}, is not
 *   JSON, or a plan is wrong).
 */
export function loadPlanTable(path: string = defaultPlansPath()): PlanTable {
  const text = readBoundedFileSync(path, { maxBytes: PLANS_FILE_MAX_BYTES, what: 'plans file', hint: 'give a JSON file of plans to --plans (data/plans.json shows the layout)' }).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new NetintelError('usage', `the plans file ${path} is not valid JSON: ${(error as Error).message}`, { details: { path } });
  }
  return parsePlanTable(json, path);
}

const PLAN_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** Checks the JSON of a plans file; see data/plans.json for the layout. */
export function parsePlanTable(json: unknown, source: string): PlanTable {
  const fail = (message: string): never => {
    throw new NetintelError('usage', `plans file ${source}: ${message}`, { details: { path: source } });
  };
  if (!isObject(json)) return fail('must hold a JSON object');
  if (!isObject(json.plans)) return fail('"plans" must be an object of plan name -> limits');
  const plans: Record<string, Plan> = {};
  for (const [name, raw] of Object.entries(json.plans)) {
    if (!PLAN_NAME.test(name)) fail(`plan name ${JSON.stringify(name)} must be lower-case letters, digits and dashes`);
    if (!isObject(raw)) return fail(`plan "${name}" must be an object`);
    const limits = checkLimits(raw, (message) => fail(`plan "${name}": ${message}`), false) as PlanLimits;
    const features = raw.features ?? [];
    if (!Array.isArray(features) || features.some((feature) => !(PLAN_FEATURES as readonly string[]).includes(String(feature)))) {
      fail(`plan "${name}": "features" must be a list of ${PLAN_FEATURES.join(', ')}`);
    }
    plans[name] = {
      name,
      title: typeof raw.title === 'string' ? raw.title : name,
      ...limits,
      features: Object.freeze([...new Set(features as PlanFeature[])]),
    };
  }
  const anonymous = json.anonymous ?? 'free';
  if (typeof anonymous !== 'string' || !Object.hasOwn(plans, anonymous)) fail(`"anonymous" must name a plan (the plan of requests without a key)`);
  // A key must be worth more than no key: accounts (and their keys) start on a plan other than the
  // anonymous one, the first other plan of the file unless it names one; a file of one plan has no other.
  const keyed = Object.keys(plans).filter((name) => name !== anonymous);
  const newAccounts = json.newAccounts ?? keyed[0] ?? anonymous;
  if (typeof newAccounts !== 'string' || !Object.hasOwn(plans, newAccounts)) fail(`"newAccounts" must name a plan (the plan of accounts made on the sign-up page)`);
  if (newAccounts === anonymous && keyed.length > 0) {
    fail(`"newAccounts" must not be "${anonymous}", the plan of requests without a key: a key must be worth more than none (name one of ${keyed.join(', ')})`);
  }
  const bulkMax = json.bulkMax ?? 100;
  if (!isCount(bulkMax)) fail('"bulkMax" must be a positive integer');
  const table: PlanTable = { anonymous: anonymous as string, newAccounts: newAccounts as string, bulkMax: bulkMax as number, plans: Object.freeze(plans), source };
  for (const plan of Object.values(plans)) checkPlanFits(plan, table, fail);
  return table;
}

/**
 * Checks the limits of a plan or of an enterprise key's overrides: counts
 * are positive integers, the rate a positive number. With `partial`, absent
 * keys are allowed (overrides).
 */
export function checkLimits(
  raw: Record<string, unknown>,
  fail: (message: string) => never,
  partial: boolean,
): Partial<PlanLimits> {
  const limits: Partial<PlanLimits> = {};
  for (const key of ['daily', 'burst', 'batch'] as const) {
    const value = raw[key];
    if (value === undefined && partial) continue;
    if (!isCount(value)) fail(`"${key}" must be a positive integer`);
    limits[key] = value as number;
  }
  const rate = raw.perMinute;
  if (!(rate === undefined && partial)) {
    if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0 || rate > 1e9) fail('"perMinute" must be a positive number');
    limits.perMinute = rate as number;
  }
  return limits;
}

/**
 * A request of `batch` items must be able to pass the burst bucket and the
 * daily allowance, or it could never be served: a batch larger than the
 * bucket would be refused forever.
 */
function checkPlanFits(plan: Plan, table: PlanTable, fail: (message: string) => never): void {
  if (plan.batch > plan.burst) fail(`plan "${plan.name}": "batch" (${plan.batch}) must not exceed "burst" (${plan.burst})`);
  if (plan.features.includes('bulk') && table.bulkMax > plan.burst) {
    fail(`plan "${plan.name}" has "bulk" but its "burst" (${plan.burst}) is below "bulkMax" (${table.bulkMax})`);
  }
}

/**
 * The plan a key uses: its plan's limits, with an enterprise key's own
 * limits over them.
 *
 * @throws NetintelError `usage` when the plan is not in the table (a key
 *   made with another plans file) or the overrides do not fit.
 */
export function effectivePlan(table: PlanTable, name: string, overrides: Partial<PlanLimits> | null): Plan {
  const plan = Object.hasOwn(table.plans, name) ? table.plans[name] : undefined;
  if (!plan) {
    throw new NetintelError('usage', `plan "${name}" is not in the plans file ${table.source} (known: ${Object.keys(table.plans).join(', ')})`, {
      details: { plan: name },
    });
  }
  if (!overrides || Object.keys(overrides).length === 0) return plan;
  const merged: Plan = { ...plan, ...overrides };
  checkPlanFits(merged, table, (message) => {
    throw new NetintelError('usage', message, { details: { plan: name } });
  });
  return merged;
}

/** The plans a key or an account may have: every plan but the one of requests without a key. */
export function keyedPlanNames(table: PlanTable): string[] {
  return Object.keys(table.plans).filter((name) => name !== table.anonymous);
}

/**
 * Checks that a plan may be given to a key or an account: a plan of the
 * table, and not the plan of requests without a key, with which a key
 * would be worth no more than none (docs/api.md, Keys and the free tier).
 *
 * @throws NetintelError `usage` naming the plans that can be given.
 */
export function checkKeyedPlan(table: PlanTable, name: string): void {
  if (name === table.anonymous && keyedPlanNames(table).length > 0) {
    throw new NetintelError('usage', `plan "${name}" is the plan of requests without a key and cannot be given to a key: use one of ${keyedPlanNames(table).join(', ')}`, {
      details: { plan: name, plans: keyedPlanNames(table) },
    });
  }
  effectivePlan(table, name, null);
}

/**
 * The plan a stored key (or account) is served with. A key stored with the
 * anonymous plan, as `keys create --plan free` once made them, is served
 * with the plan of new accounts, the lowest plan a key is given: its holder
 * sent a key, and gets more than a caller without one.
 *
 * @throws NetintelError `usage` as {@link effectivePlan}.
 */
export function planOfKey(table: PlanTable, stored: string, overrides: Partial<PlanLimits> | null): Plan {
  return effectivePlan(table, stored === table.anonymous ? table.newAccounts : stored, overrides);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}
