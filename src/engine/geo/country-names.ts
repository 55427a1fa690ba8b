let displayNames: Intl.DisplayNames | undefined;

/**
 * English country name for an ISO 3166-1 alpha-2 code, from the ICU data
 * built into Node (no table to ship). Null for an empty or unknown code.
 */
export function countryName(code: string | null): string | null {
  if (!code || !/^[A-Z]{2}$/.test(code)) return null;
  displayNames ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  return displayNames.of(code) ?? null;
}
