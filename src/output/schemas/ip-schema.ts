import type { RecordSchema } from '../record-schema.js';

const LOCATION = ['country', 'country_code', 'region', 'region_code', 'city', 'latitude', 'longitude', 'timezone', 'zip'].map(
  (key) => `location.${key}`,
);
const NETWORK = ['isp', 'organization', 'asn', 'domain', 'rpki.status', 'rpki.reason'].map((key) => `network.${key}`);
const SECURITY = ['is_vpn', 'is_proxy', 'is_tor', 'is_hosting', 'threat_level'].map((key) => `security.${key}`);

export const DBIP_CREDIT = 'IP geolocation by DB-IP (https://db-ip.com), CC BY 4.0';

/** Columns of the IP information record (CSV, table, `--fields`). */
export const IP_SCHEMA: RecordSchema = {
  kind: 'ip',
  mainValue: ['location.country_code'],
  columns: ['ip', 'type', ...LOCATION, ...NETWORK, ...SECURITY, 'reserved'],
  groups: { location: LOCATION, network: NETWORK, security: SECURITY },
  identity: ['ip'],
  tableColumns: ['ip', 'location.country_code', 'location.region', 'location.city', 'network.asn', 'network.organization', 'security.is_hosting', 'reserved'],
  credit: DBIP_CREDIT,
};
