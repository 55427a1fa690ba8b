/**
 * The entities of an RDAP answer (RFC 9083 §5.1) and their jCard contact
 * data (RFC 7095): who holds a role, searched through nested entities, and
 * the name, organisation, e-mail, phone and country of a contact. Every
 * reader takes untrusted JSON and never throws: what is not the expected
 * shape is not there.
 */

/** A contact read from an entity's jCard; a value a registry withheld is null and named in `redacted`. */
export interface RdapContact {
  handle: string | null;
  name: string | null;
  organisation: string | null;
  email: string | null;
  phone: string | null;
  country: string | null;
  /** The contact's members given as withheld ("REDACTED FOR PRIVACY" and the like): `name`, `email`, ... */
  redacted: string[];
}

/** How deep entities are searched: registries nest two or three levels (registrar, its abuse contact). */
const MAX_ENTITY_DEPTH = 6;
/** Entities looked at in one answer, at most: a hostile answer may hold millions. */
const MAX_ENTITIES = 2000;

/** Values registries put in place of withheld data (ICANN's Registration Data Policy wording and its variants). */
const REDACTED_TEXT = /^\s*(redacted( for privacy)?|data (protected|redacted)|not disclosed|withheld( for privacy)?|privacy protected)\b/i;

/** True when a registry wrote this value in place of withheld data. */
export function isRedactedText(value: unknown): boolean {
  return typeof value === 'string' && REDACTED_TEXT.test(value);
}

function objectOf(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function entitiesOf(node: Record<string, unknown>): Array<Record<string, unknown>> {
  return Array.isArray(node.entities) ? node.entities.map(objectOf).filter((entity): entity is Record<string, unknown> => entity !== null) : [];
}

function rolesOf(entity: Record<string, unknown>): string[] {
  return Array.isArray(entity.roles) ? entity.roles.filter((role): role is string => typeof role === 'string').map((role) => role.toLowerCase()) : [];
}

/**
 * The first entity holding `role`, breadth first from the object's own
 * entities down through theirs (an abuse contact is often an entity of the
 * registrar entity, RFC 9083 §5.1), or null.
 */
export function entityWithRole(root: unknown, role: string): Record<string, unknown> | null {
  const start = objectOf(root);
  if (start === null) return null;
  let level = entitiesOf(start);
  let seen = 0;
  for (let depth = 0; depth < MAX_ENTITY_DEPTH && level.length > 0; depth++) {
    const next: Array<Record<string, unknown>> = [];
    for (const entity of level) {
      if (++seen > MAX_ENTITIES) return null;
      if (rolesOf(entity).includes(role)) return entity;
      next.push(...entitiesOf(entity));
    }
    level = next;
  }
  return null;
}

/** The properties of a jCard (RFC 7095 §3.3: `["vcard", [[name, params, type, value...], ...]]`), or none. */
function jcardProperties(entity: Record<string, unknown>): unknown[][] {
  const card = entity.vcardArray;
  if (!Array.isArray(card) || card[0] !== 'vcard' || !Array.isArray(card[1])) return [];
  return (card[1] as unknown[]).filter((property): property is unknown[] => Array.isArray(property) && typeof property[0] === 'string');
}

/** A property's value as text: a string, or the parts of a structured value joined (RFC 7095 §3.3.1.3). */
function propertyText(property: unknown[]): string | null {
  const value = property[3];
  if (typeof value === 'string') return value.trim() === '' ? null : value.trim();
  if (Array.isArray(value)) {
    const parts = value.flat().filter((part): part is string => typeof part === 'string' && part.trim() !== '');
    return parts.length === 0 ? null : parts.join(' ');
  }
  return null;
}

function properties(entity: Record<string, unknown>, name: string): unknown[][] {
  return jcardProperties(entity).filter((property) => (property[0] as string).toLowerCase() === name);
}

/** The first value of a jCard property; the redaction of a withheld one is noted under `member`. */
function firstValue(entity: Record<string, unknown>, name: string, member: string, redacted: string[]): string | null {
  for (const property of properties(entity, name)) {
    const text = propertyText(property);
    if (text === null) continue;
    if (isRedactedText(text)) {
      if (!redacted.includes(member)) redacted.push(member);
      continue;
    }
    return text;
  }
  return null;
}

/** A phone number: the `tel:` URI's number (RFC 3966) or the text, without its parameters (`;ext=`). */
function phoneOf(entity: Record<string, unknown>, redacted: string[]): string | null {
  const text = firstValue(entity, 'tel', 'phone', redacted);
  return text === null ? null : text.replace(/^tel:/i, '').split(';')[0]!.trim() || null;
}

/** The country of the first address: its `cc` parameter (RFC 8605) or the last part of the structured address. */
function countryOf(entity: Record<string, unknown>): string | null {
  for (const property of properties(entity, 'adr')) {
    const params = objectOf(property[1]);
    if (params !== null && typeof params.cc === 'string' && /^[a-z]{2}$/i.test(params.cc)) return params.cc.toUpperCase();
    const value = property[3];
    if (Array.isArray(value)) {
      const country = value[6];
      if (typeof country === 'string' && country.trim() !== '' && !isRedactedText(country)) return country.trim();
    }
  }
  return null;
}

/** An entity's contact: the jCard's fn, org, email, tel and adr country, and which of them were withheld. */
export function contactOf(entity: Record<string, unknown>): RdapContact {
  const redacted: string[] = [];
  const handle = typeof entity.handle === 'string' && entity.handle.trim() !== '' ? entity.handle : null;
  const name = firstValue(entity, 'fn', 'name', redacted);
  const organisation = firstValue(entity, 'org', 'organisation', redacted);
  const email = firstValue(entity, 'email', 'email', redacted);
  const phone = phoneOf(entity, redacted);
  return { handle, name, organisation, email: email?.replace(/^mailto:/i, '') ?? null, phone, country: countryOf(entity), redacted };
}

/** The publicIds of an entity of the given type (a registrar's `IANA Registrar ID`, RFC 9083 §4.8). */
export function publicId(entity: Record<string, unknown>, type: RegExp): string | null {
  if (!Array.isArray(entity.publicIds)) return null;
  for (const item of entity.publicIds) {
    const id = objectOf(item);
    if (id !== null && typeof id.type === 'string' && type.test(id.type) && typeof id.identifier === 'string') return id.identifier;
  }
  return null;
}
