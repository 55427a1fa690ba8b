import { defaultDataDir } from '../engine/data/data-files.js';
import { loadSourceRegistry } from '../engine/data/data-sources.js';
import { dataStatus, type DataSourceStatus } from '../engine/data/data-status.js';

/**
 * What `netintel --version` prints: the version, then the date of each
 * dataset the answers come from, read from the files' metadata (no network):
 * `data: dbip-city 2026-06 (DB-IP Lite, CC BY 4.0), asn 2026-06-17, feeds: not installed, rpki: not installed`.
 */
export function versionText(version: string, dataDir: string | null, env: Readonly<Record<string, string | undefined>>): string {
  const rows = dataStatus({ dataDir: dataDir ?? defaultDataDir(env), sources: loadSourceRegistry(), now: new Date() });
  const byName = (name: string) => rows.find((row) => row.name === name);
  const city = byName('dbip-city-ipv4');
  const asn = byName('asn-ipv4');
  const rpki = byName('rpki');
  const parts = [
    installed(city) ? `dbip-city ${city.updated!.slice(0, 7)} (DB-IP Lite, ${city.licence})` : 'dbip-city: not installed',
    installed(asn) ? `asn ${asn.updated!.slice(0, 10)}` : 'asn: not installed',
    `feeds: ${feedsText(rows.filter((row) => row.type === 'feed'))}`,
    installed(rpki) ? `rpki ${rpki.updated!.slice(0, 16).replace('T', ' ')}` : 'rpki: not installed',
  ];
  return `netintel ${version}\ndata: ${parts.join(', ')}\n`;
}

function installed(row: DataSourceStatus | undefined): row is DataSourceStatus {
  return row !== undefined && row.origin !== null && row.updated !== null;
}

/** `not installed`, or how many of the feeds a plain `data update` installs are there, and the newest one's date. */
function feedsText(feeds: readonly DataSourceStatus[]): string {
  const present = feeds.filter(installed);
  if (present.length === 0) return 'not installed';
  const newest = present.map((row) => row.updated!.slice(0, 10)).sort().at(-1)!;
  return `${present.length} of ${feeds.filter((row) => row.enabled).length} installed, newest ${newest}`;
}
