import { logStepScale, mapCount, NO_DATA_COLOUR, type CountStep } from './world-map-scale.js';
import { locateSmallCountries, projectAtlas, type MapFrame } from './world-map-shapes.js';

/**
 * `summarize --svg FILE`: a world map coloured by the number of addresses
 * per country, a standalone SVG document that a browser shows as it is.
 *
 * Layout (SVG units): the title on top, the globe (Equal Earth) below it,
 * then one row of legend swatches and the credit line. DB-IP's licence
 * (CC BY 4.0) asks for credit wherever its data is shown, so the credit is
 * part of the picture, not of a page around it.
 */

export interface WorldMapOptions {
  /** The heading and accessible name of the map; "Addresses by country" when absent. */
  readonly title?: string;
}

export interface WorldMap {
  /** The SVG document (UTF-8 text with its XML declaration). */
  readonly svg: string;
  /**
   * The codes of the counts that the map does not show, sorted: codes that
   * are not ISO 3166-1 countries ("EU", "ZZ"), territories Natural Earth
   * draws as part of another country (Réunion, Guadeloupe), and small
   * countries without a count. A small country with a count (Singapore,
   * Hong Kong, Malta) is drawn as a dot.
   */
  readonly unmapped: readonly string[];
}

const WIDTH = 960;
const HEIGHT = 580;
const MAP_FRAME: MapFrame = [
  [12, 44],
  [WIDTH - 12, 496],
];
/** Countries too small to see at the map's scale are dots of this radius. */
const DOT_RADIUS = 3.5;
const BACKGROUND = '#ffffff';
const TEXT_COLOUR = '#222222';
const MUTED_TEXT_COLOUR = '#555555';
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
const DEFAULT_TITLE = 'Addresses by country';
/** What fits on one line across the picture at the heading's size. */
const MAX_HEADING_CHARACTERS = 72;
const CREDIT = 'Shapes: Natural Earth · Data: DB-IP';

/** Made on first use: loading ICU's number data is for runs that draw a map. */
let numberFormat: Intl.NumberFormat | undefined;

/** Characters XML 1.0 cannot carry (C0 controls other than tab and line ends, U+FFFE, U+FFFF, lone surrogates). */
// eslint-disable-next-line no-control-regex
const XML_INVALID = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Text made safe for an XML element or a double-quoted attribute. Tab and
 * line ends become character references: a parser reads a literal CR as LF
 * (XML 1.0 §2.11) and, in an attribute, any of them as a space (§3.3.3).
 */
function escapeXml(text: string): string {
  return text
    .replace(XML_INVALID, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/[\t\n\r]/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** English names as netintel's other output gives them (ICU's, as `netintel ip` prints), made once per map. */
function countryNamer(): (code: string | null, atlasName: string) => string {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  return (code, atlasName) => {
    if (code === null) return atlasName;
    try {
      return names.of(code) ?? atlasName;
    } catch {
      return atlasName;
    }
  };
}

/** The heading as drawn: a title longer than the picture is wide is cut, whole characters kept; the accessible name keeps it all. */
function visibleHeading(title: string): string {
  const characters = Array.from(title.replace(/\s+/g, ' '));
  return characters.length <= MAX_HEADING_CHARACTERS ? characters.join('') : `${characters.slice(0, MAX_HEADING_CHARACTERS - 1).join('')}…`;
}

/** A count with thousands separators: 1,234,567. */
function formatCount(count: number): string {
  numberFormat ??= new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  return numberFormat.format(count);
}

function stepLabel(step: CountStep): string {
  return step.from === step.to ? formatCount(step.from) : `${formatCount(step.from)} – ${formatCount(step.to)}`;
}

/**
 * The legend: one swatch per step, then no data, in a row under the map,
 * each as wide as its label. Text is not measured (no fonts at hand): a
 * character of the sans-serif digits and separators is taken as 0.6 em, and
 * the font shrinks when the row would not fit.
 */
function legend(steps: readonly CountStep[], hasDots: boolean): string {
  const left = 24;
  const top = 518;
  const swatchHeight = 12;
  const gap = 10;
  const entries = [...steps.map((step) => ({ colour: step.colour, label: stepLabel(step) })), { colour: NO_DATA_COLOUR, label: 'No data' }];
  const ems = entries.map((entry) => Math.max(5, entry.label.length * 0.6 + 0.5));
  const available = WIDTH - 2 * left - gap * (entries.length - 1);
  const fontSize = Math.max(8, Math.min(12, Math.floor(available / ems.reduce((sum, em) => sum + em, 0))));
  const caption = steps.length === 0 ? 'No data for any country' : hasDots ? 'Count per country (dots: countries too small to see)' : 'Count per country';
  const lines = [`<g class="legend" font-size="${fontSize}" fill="${TEXT_COLOUR}">`, `<text x="${left}" y="${top - 6}" font-size="12" font-weight="600">${escapeXml(caption)}</text>`];
  let x = left;
  entries.forEach((entry, index) => {
    const width = Math.round(ems[index]! * fontSize);
    lines.push(
      `<rect x="${x}" y="${top}" width="${width}" height="${swatchHeight}" fill="${entry.colour}" stroke="#999999" stroke-width="0.5"/>`,
      `<text x="${x}" y="${top + swatchHeight + 15}">${escapeXml(entry.label)}</text>`,
    );
    x += width + gap;
  });
  lines.push('</g>');
  return lines.join('\n');
}

function description(countries: number, total: number, steps: readonly CountStep[]): string {
  if (steps.length === 0) return 'World map with no data: every country is grey.';
  const low = steps[0]!.from;
  const high = steps.at(-1)!.to;
  return (
    `World map of ${formatCount(total)} counted in ${formatCount(countries)} ${countries === 1 ? 'country' : 'countries'}, ` +
    `each country shaded by its count in ${steps.length} ${steps.length === 1 ? 'step' : 'steps'} of a logarithmic scale from ${formatCount(low)} to ${formatCount(high)}; ` +
    'grey countries have no data.'
  );
}

/** Where a place ([longitude, latitude] in degrees) lies in the map's SVG units, or null when the projection cannot place it. */
export function worldMapPoint(place: readonly [number, number]): [number, number] | null {
  return projectAtlas(MAP_FRAME).project(place);
}

/**
 * The world map of `counts` (ISO 3166-1 alpha-2 code -> count). A count that
 * is not a whole number of at least 1 counts as no data; codes are matched
 * as given (upper case, as the IP records hold them). The same counts and
 * options give the same document, byte for byte.
 */
export function renderWorldMapSvg(counts: ReadonlyMap<string, number>, options: WorldMapOptions = {}): WorldMap {
  const atlas = projectAtlas(MAP_FRAME);
  const counted = [...counts].filter(([, count]) => mapCount(count) !== null).map(([code]) => code);
  const dots = locateSmallCountries(atlas, counted);
  const drawn = new Set([...atlas.countries.flatMap((country) => (country.code === null ? [] : [country.code])), ...dots.map((dot) => dot.code)]);
  const unmapped = [...counts.keys()].filter((code) => !drawn.has(code)).sort();

  const shown = new Map<string, number>();
  for (const [code, count] of counts) {
    const value = mapCount(count);
    if (value !== null && drawn.has(code)) shown.set(code, value);
  }
  const scale = logStepScale([...shown.values()].sort((a, b) => a - b));
  const fillOf = (count: number | undefined) => (count === undefined ? null : scale.stepOf(count))?.colour ?? NO_DATA_COLOUR;
  const nameOf = countryNamer();
  const labelOf = (code: string, name: string, count: number | undefined) => `${name} (${code}): ${count === undefined ? 'no data' : formatCount(count)}`;

  const title = options.title ?? DEFAULT_TITLE;
  const total = [...shown.values()].reduce((sum, count) => sum + count, 0);
  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-labelledby="map-title map-desc" font-family="${escapeXml(FONT)}">`,
    `<title id="map-title">${escapeXml(title)}</title>`,
    `<desc id="map-desc">${escapeXml(description(shown.size, total, scale.steps))}</desc>`,
    `<rect class="background" width="${WIDTH}" height="${HEIGHT}" fill="${BACKGROUND}"/>`,
    `<path class="sphere" d="${atlas.sphere}" fill="${BACKGROUND}" stroke="#bbbbbb" stroke-width="0.75"/>`,
    '<g class="countries" stroke="#ffffff" stroke-width="0.5" stroke-linejoin="round">',
  ];
  for (const country of atlas.countries) {
    const name = nameOf(country.code, country.atlasName);
    if (country.code === null) {
      out.push(`<path fill="${NO_DATA_COLOUR}" d="${country.path}"><title>${escapeXml(`${name}: no data`)}</title></path>`);
      continue;
    }
    const count = shown.get(country.code);
    out.push(`<path data-country="${escapeXml(country.code)}" fill="${fillOf(count)}" d="${country.path}"><title>${escapeXml(labelOf(country.code, name, count))}</title></path>`);
  }
  out.push('</g>');
  if (dots.length > 0) {
    // Outlined in grey: the lightest step would vanish against the ocean.
    out.push('<g class="small-countries" stroke="#4d4d4d" stroke-width="0.75">');
    for (const dot of dots) {
      const count = shown.get(dot.code);
      const label = labelOf(dot.code, nameOf(dot.code, dot.atlasName), count);
      out.push(
        `<circle data-country="${escapeXml(dot.code)}" cx="${dot.point[0].toFixed(1)}" cy="${dot.point[1].toFixed(1)}" r="${DOT_RADIUS}" fill="${fillOf(count)}"><title>${escapeXml(label)}</title></circle>`,
      );
    }
    out.push('</g>');
  }
  out.push(
    `<text class="title" x="24" y="30" font-size="20" font-weight="600" fill="${TEXT_COLOUR}">${escapeXml(visibleHeading(title))}</text>`,
    legend(scale.steps, dots.length > 0),
    `<text class="credit" x="${WIDTH - 24}" y="${HEIGHT - 12}" font-size="11" text-anchor="end" fill="${MUTED_TEXT_COLOUR}">${escapeXml(CREDIT)}</text>`,
    '</svg>',
    '',
  );
  return { svg: out.join('\n'), unmapped };
}
