import { createRequire } from 'node:module';
import { geoEqualEarth, geoPath } from 'd3-geo';
import { iso31661NumericToAlpha2 } from 'iso-3166/1-n-to-1-a2.js';
import { feature } from 'topojson-client';
import type { Feature, FeatureCollection, Geometry } from 'geojson';
import type { GeometryCollection, Topology } from 'topojson-specification';

/** One country of the atlas, projected into the map's frame. */
export interface CountryShape {
  /** ISO 3166-1 alpha-2, or null for a territory the atlas gives no code (Kosovo, N. Cyprus, Somaliland). */
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

/**
 * The atlas is read from the world-atlas package when a map is drawn, never
 * when this module loads: the CLI bundle includes this module, and a lookup
 * that draws no map must not pay for reading and parsing the shapes.
 * world-atlas is Natural Earth at 1:110m, its feature ids ISO 3166-1 numeric.
 */
function readAtlas(): Topology<{ countries: GeometryCollection<CountryProperties> }> {
  return createRequire(import.meta.url)('world-atlas/countries-110m.json') as Topology<{ countries: GeometryCollection<CountryProperties> }>;
}

/** The resolved path of the atlas file (for tests that check when it is read). */
export function atlasFilePath(): string {
  return createRequire(import.meta.url).resolve('world-atlas/countries-110m.json');
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

  const topology = readAtlas();
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
    const numeric = country.id === undefined ? undefined : String(country.id);
    const code = numeric !== undefined && Object.hasOwn(iso31661NumericToAlpha2, numeric) ? iso31661NumericToAlpha2[numeric]! : null;
    return { code, atlasName: country.properties?.name ?? '', path: path(country) ?? '' };
  });
  const atlas: ProjectedAtlas = {
    countries,
    sphere: path({ type: 'Sphere' }) ?? '',
    project: (place) => projection([place[0], place[1]]),
  };
  projected.set(key, atlas);
  return atlas;
}
