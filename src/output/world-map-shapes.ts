import { createRequire } from 'node:module';
import { geoArea, geoCentroid, geoEqualEarth, geoPath } from 'd3-geo';
import { iso31661NumericToAlpha2 } from 'iso-3166/1-n-to-1-a2.js';
import { feature } from 'topojson-client';
import type { Feature, FeatureCollection, Geometry, Polygon } from 'geojson';
import type { GeometryCollection, Topology } from 'topojson-specification';

/** One country of the atlas, projected into the map's frame. */
export interface CountryShape {
  /** ISO 3166-1 alpha-2 (XK for Kosovo), or null for a territory without one (N. Cyprus, Somaliland). */
  readonly code: string | null;
  /** Natural Earth's short English name, e.g. "Dem. Rep. Congo". */
  readonly atlasName: string;
  /** SVG path data. */
  readonly path: string;
}

export interface ProjectedAtlas {
  readonly countries: readonly CountryShape[];
  /** The outline of the globe, drawn around the map. */
  readonly sphere: string;
  /** Where a place ([longitude, latitude] in degrees) lies on the map, or null when the projection cannot place it. */
  project(place: readonly [number, number]): [number, number] | null;
}

/** The box the globe is fitted into: [[left, top], [right, bottom]] in SVG units. */
export type MapFrame = readonly [readonly [number, number], readonly [number, number]];

type CountryProperties = { name?: string };

type CountryTopology = Topology<{ countries: GeometryCollection<CountryProperties> }>;

/**
 * The atlases are read from the world-atlas package when a map is drawn,
 * never when this module loads: the CLI bundle includes this module, and a
 * lookup that draws no map must not pay for reading and parsing the shapes.
 * world-atlas is Natural Earth; its feature ids are ISO 3166-1 numeric.
 */
function readAtlas(scale: '110m' | '50m'): CountryTopology {
  return createRequire(import.meta.url)(`world-atlas/countries-${scale}.json`) as CountryTopology;
}

/**
 * Kosovo has no ISO 3166-1 entry, so the atlas gives it no id; DB-IP (like
 * the EU and most registries) codes it XK, a user-assigned code.
 */
const CODES_BY_ATLAS_NAME: Readonly<Record<string, string>> = { Kosovo: 'XK' };

function alpha2Of(id: string | number | undefined, atlasName?: string): string | null {
  const numeric = id === undefined ? undefined : String(id);
  if (numeric !== undefined && Object.hasOwn(iso31661NumericToAlpha2, numeric)) return iso31661NumericToAlpha2[numeric]!;
  return atlasName !== undefined && Object.hasOwn(CODES_BY_ATLAS_NAME, atlasName) ? CODES_BY_ATLAS_NAME[atlasName]! : null;
}

const projected = new Map<string, ProjectedAtlas>();

/**
 * Every country of the atlas, projected with Equal Earth (an equal-area
 * projection, so that a country's share of the picture matches its share of
 * the land) and fitted to `frame`, in the atlas's order. Path coordinates are
 * rounded to one decimal: a tenth of a unit is finer than a screen shows
 * at the map's size and keeps the document small.
 */
export function projectAtlas(frame: MapFrame): ProjectedAtlas {
  const key = JSON.stringify(frame);
  const cached = projected.get(key);
  if (cached) return cached;

  const topology = readAtlas('110m');
  const collection = feature(topology, topology.objects.countries) as FeatureCollection<Geometry, CountryProperties>;
  const projection = geoEqualEarth().fitExtent(
    [
      [frame[0][0], frame[0][1]],
      [frame[1][0], frame[1][1]],
    ],
    { type: 'Sphere' },
  );
  const path = geoPath(projection).digits(1);
  const countries = collection.features.map((country: Feature<Geometry, CountryProperties>) => {
    const atlasName = country.properties?.name ?? '';
    return { code: alpha2Of(country.id, atlasName), atlasName, path: path(country) ?? '' };
  });
  const atlas: ProjectedAtlas = {
    countries,
    sphere: path({ type: 'Sphere' }) ?? '',
    project: (place) => projection([place[0], place[1]]),
  };
  projected.set(key, atlas);
  return atlas;
}

/** A country too small for the map's atlas, drawn as a dot. */
export interface SmallCountry {
  readonly code: string;
  /** Natural Earth's short English name. */
  readonly atlasName: string;
  /** The centre of its largest part on the map. */
  readonly point: readonly [number, number];
}

let assignedCodes: Set<string> | undefined;
let smallCountries: Map<string, { atlasName: string; centre: [number, number] }> | undefined;

/**
 * The countries of Natural Earth's 1:50m atlas that the 1:110m one leaves
 * out (Singapore, Hong Kong, Malta, Bahrain...), each with the centre of
 * its largest part: where an island state's territory is spread (Kiribati),
 * the dot marks where most of it is.
 */
function readSmallCountries(drawn: ReadonlySet<string>): Map<string, { atlasName: string; centre: [number, number] }> {
  const topology = readAtlas('50m');
  const found = new Map<string, { atlasName: string; centre: [number, number] }>();
  for (const geometry of topology.objects.countries.geometries) {
    const code = alpha2Of(geometry.id);
    if (code === null || drawn.has(code) || found.has(code)) continue;
    const shape = feature(topology, geometry) as Feature<Geometry, CountryProperties>;
    const parts: Polygon[] =
      shape.geometry.type === 'Polygon'
        ? [shape.geometry]
        : shape.geometry.type === 'MultiPolygon'
          ? shape.geometry.coordinates.map((coordinates) => ({ type: 'Polygon', coordinates }))
          : [];
    const largest = parts.reduce<Polygon | undefined>((best, part) => (best === undefined || geoArea(part) > geoArea(best) ? part : best), undefined);
    if (largest === undefined) continue;
    found.set(code, { atlasName: shape.properties?.name ?? '', centre: geoCentroid(largest) });
  }
  return found;
}

/**
 * Where the countries of `codes` that `atlas` does not draw lie, as dots,
 * sorted by code; a code neither atlas has is left out. The finer atlas is
 * read only when some country code needs it.
 */
export function locateSmallCountries(atlas: ProjectedAtlas, codes: Iterable<string>): SmallCountry[] {
  const drawn = new Set(atlas.countries.flatMap((country) => (country.code === null ? [] : [country.code])));
  // Codes that name no country ("EU", "ZZ") need no atlas to be left out.
  assignedCodes ??= new Set(Object.values(iso31661NumericToAlpha2));
  const wanted = [...new Set(codes)].filter((code) => !drawn.has(code) && assignedCodes!.has(code)).sort();
  if (wanted.length === 0) return [];
  smallCountries ??= readSmallCountries(drawn);
  return wanted.flatMap((code) => {
    const small = smallCountries!.get(code);
    const point = small === undefined ? null : atlas.project(small.centre);
    return small === undefined || point === null ? [] : [{ code, atlasName: small.atlasName, point: [point[0], point[1]] as const }];
  });
}
