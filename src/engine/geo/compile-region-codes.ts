import { createRequire } from 'node:module';

/**
 * Folds a region name for matching: no accents, no case, no punctuation, and
 * without the administrative words that sources add or drop ("Province of",
 * "Oblast", "Prefecture", "Sheng"...).
 */
export function foldRegionName(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\(.*?\)/g, ' ')
    .replace(/['’`]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .replace(
      /\b(province|provincia|prefecture|region|oblast|krai|kray|sheng|shi|state|county|district|department|departement|governorate|municipality|autonomous|republic|respublika|city|of|the)\b/g,
      ' ',
    )
    .replace(/\s+/g, ' ')
    .trim();
}

interface Candidate {
  code: string;
  /** A first-level subdivision (its parent is the country itself). */
  topLevel: boolean;
}

/** Subdivision names folded, per country, from both sources, mapped to their ISO 3166-2 codes. */
async function subdivisionIndex(): Promise<{ index: Map<string, Map<string, Candidate[]>>; valid: ReadonlySet<string> }> {
  const { iso31662 } = (await import('iso-3166/2.js')) as { iso31662: Array<{ code: string; name: string; parent: string }> };
  const english = createRequire(import.meta.url)('country-region-data/data.json') as Array<{
    countryShortCode: string;
    regions: Array<{ name: string; shortCode?: string }>;
  }>;
  const valid = new Map(iso31662.map((entry) => [entry.code, entry]));
  const index = new Map<string, Map<string, Candidate[]>>();
  const add = (country: string, name: string, code: string) => {
    const entry = valid.get(code);
    if (!entry) return; // only real ISO 3166-2 codes
    const byName = index.get(country) ?? new Map<string, Candidate[]>();
    index.set(country, byName);
    const key = foldRegionName(name);
    if (key === '') return;
    const list = byName.get(key) ?? [];
    if (!list.some((candidate) => candidate.code === code)) list.push({ code, topLevel: entry.parent === country });
    byName.set(key, list);
  };
  for (const entry of iso31662) add(entry.code.slice(0, 2), entry.name, entry.code);
  for (const country of english) {
    for (const region of country.regions) {
      if (region.shortCode) add(country.countryShortCode, region.name, `${country.countryShortCode}-${region.shortCode}`);
    }
  }
  return { index, valid: new Set(valid.keys()) };
}

export interface RegionCodeStats {
  regions: number;
  matched: number;
}

/**
 * Matches a (country, region name) pair of the geolocation data to an
 * ISO 3166-2 code: the curated aliases first (data/region-aliases.json,
 * English exonyms such as Bavaria), then by folded name. A name that folds
 * to one code (or to one first-level code among several) is matched;
 * anything ambiguous or unknown gives null, so the record says null rather
 * than guess.
 */
export async function createRegionMatcher(
  aliases: Readonly<Record<string, Readonly<Record<string, string>>>> = {},
): Promise<(country: string, region: string) => string | null> {
  const { index, valid } = await subdivisionIndex();
  return (country, region) => {
    const alias = aliases[country]?.[region];
    if (alias !== undefined && valid.has(alias)) return alias;
    const candidates = index.get(country)?.get(foldRegionName(region)) ?? [];
    const topLevel = candidates.filter((candidate) => candidate.topLevel);
    const chosen = candidates.length === 1 ? candidates[0] : topLevel.length === 1 ? topLevel[0] : undefined;
    return chosen?.code ?? null;
  };
}
