/**
 * The world map document (src/output/world-map-svg.ts), read back as XML:
 * its root, one path per atlas country, fills by step, the legend, escaping,
 * and for any counts (fast-check) a well-formed document whose colours never
 * get lighter as a count grows.
 */
import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { iso31661 } from 'iso-3166';
import { describe, expect, it } from 'vitest';
import { logStepScale, mapCount, NO_DATA_COLOUR, STEP_COLOURS } from '../../src/output/world-map-scale.js';
import { renderWorldMapSvg } from '../../src/output/world-map-svg.js';

interface Element {
  readonly [key: string]: unknown;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  htmlEntities: true,
  isArray: (name) => ['path', 'circle', 'rect', 'text', 'g'].includes(name),
});

interface CountryPath {
  readonly code: string | undefined;
  readonly fill: string;
  readonly title: string;
}

/** The parsed document, after checking it is well-formed XML; `countries` holds the country paths, then the dots of small countries. */
function parse(svg: string): { root: Element; countries: CountryPath[]; legendLabels: string[] } {
  const valid = XMLValidator.validate(svg);
  if (valid !== true) throw new Error(`not well-formed: ${JSON.stringify(valid.err)}`);
  const document = parser.parse(svg) as { svg: Element };
  const root = document.svg;
  const groups = root['g'] as Element[];
  const countryGroup = groups.find((group) => group['@class'] === 'countries')!;
  const dotGroup = groups.find((group) => group['@class'] === 'small-countries');
  const countries = [...(countryGroup['path'] as Element[]), ...((dotGroup?.['circle'] as Element[] | undefined) ?? [])].map((shape) => ({
    code: shape['@data-country'] as string | undefined,
    fill: shape['@fill'] as string,
    title: shape['title'] as string,
  }));
  const legendGroup = groups.find((group) => group['@class'] === 'legend')!;
  const legendLabels = (legendGroup['text'] as Array<Element | string>).map((text) => (typeof text === 'string' ? text : (text['#text'] as string)));
  return { root, countries, legendLabels };
}

const EMPTY = parse(renderWorldMapSvg(new Map()).svg);
/** Every code the atlas draws. */
const ATLAS_CODES = EMPTY.countries.flatMap((country) => (country.code === undefined ? [] : [country.code]));

describe('renderWorldMapSvg', () => {
  it('makes a standalone SVG document with its accessible name and description', () => {
    const { svg } = renderWorldMapSvg(new Map([['US', 10]]), { title: 'Visitors, March' });
    expect(svg.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg ')).toBe(true);
    const { root } = parse(svg);
    expect(root['@xmlns']).toBe('http://www.w3.org/2000/svg');
    expect(root['@viewBox']).toMatch(/^0 0 \d+ \d+$/);
    expect(root['@role']).toBe('img');
    expect(root['title']).toEqual(expect.objectContaining({ '#text': 'Visitors, March' }));
    expect(root['desc']).toEqual(expect.objectContaining({ '#text': expect.stringMatching(/^World map of 10 counted in 1 country/) }));
    expect((root['text'] as Element[]).map((text) => text['#text'])).toEqual(['Visitors, March', 'Shapes: Natural Earth · Data: DB-IP']);
  });

  it('draws every country of the atlas, with its name and count as a tooltip', () => {
    expect(EMPTY.countries.length).toBe(177);
    expect(new Set(ATLAS_CODES).size).toBe(ATLAS_CODES.length);
    for (const code of ['US', 'DE', 'CN', 'BR', 'AU', 'ZA', 'IN', 'RU', 'FR', 'GB']) expect(ATLAS_CODES).toContain(code);
    const { countries } = parse(renderWorldMapSvg(new Map([['US', 1234567], ['DE', 5]])).svg);
    expect(countries.find((country) => country.code === 'US')?.title).toBe('United States (US): 1,234,567');
    expect(countries.find((country) => country.code === 'DE')?.title).toBe('Germany (DE): 5');
    expect(countries.find((country) => country.code === 'FR')?.title).toBe('France (FR): no data');
  });

  it('draws the territories the atlas gives no code as no data, without a data-country', () => {
    const { countries } = parse(renderWorldMapSvg(new Map([['XK', 4], ['US', 1]])).svg);
    const uncoded = countries.filter((country) => country.code === undefined);
    expect(uncoded.map((country) => country.title).sort()).toEqual(['N. Cyprus: no data', 'Somaliland: no data']);
    // Kosovo has no ISO 3166-1 number in the atlas; DB-IP codes it XK.
    expect(countries.find((country) => country.code === 'XK')?.title).toBe('Kosovo (XK): 4');
    expect(uncoded.every((country) => country.fill === NO_DATA_COLOUR)).toBe(true);
  });

  it('fills a counted country with a step colour and the others with the no-data grey', () => {
    const { countries } = parse(renderWorldMapSvg(new Map([['BR', 3]])).svg);
    const brazil = countries.find((country) => country.code === 'BR')!;
    expect(brazil.fill).not.toBe(NO_DATA_COLOUR);
    expect(STEP_COLOURS).toContain(brazil.fill);
    expect(countries.filter((country) => country.code !== 'BR').every((country) => country.fill === NO_DATA_COLOUR)).toBe(true);
  });

  it('reports the codes it cannot draw: not countries, parts of another country, small countries without a count', () => {
    const { unmapped, svg } = renderWorldMapSvg(new Map([['ZZ', 1], ['US', 9], ['EU', 3], ['RE', 5], ['SG', 400], ['HK', 0], ['us', 2]]));
    expect(unmapped).toEqual(['EU', 'HK', 'RE', 'ZZ', 'us']);
    expect(parse(svg).countries.filter((country) => country.fill !== NO_DATA_COLOUR).map((country) => country.code)).toEqual(['US', 'SG']);
  });

  it('draws a counted country too small for the atlas as a dot, with its tooltip', () => {
    const counts = new Map([['SG', 400], ['HK', 12_000], ['MT', 3], ['US', 12_000]]);
    const { svg, unmapped } = renderWorldMapSvg(counts);
    expect(unmapped).toEqual([]);
    const document = parser.parse(svg) as { svg: Element };
    const dots = ((document.svg['g'] as Element[]).find((group) => group['@class'] === 'small-countries')!['circle'] as Element[]).map((dot) => ({
      code: dot['@data-country'],
      fill: dot['@fill'],
      title: dot['title'],
    }));
    const us = parse(svg).countries.find((country) => country.code === 'US')!;
    expect(dots.map((dot) => dot.code)).toEqual(['HK', 'MT', 'SG']);
    expect(dots.find((dot) => dot.code === 'HK')).toEqual({ code: 'HK', fill: us.fill, title: 'Hong Kong SAR China (HK): 12,000' });
    expect(dots.find((dot) => dot.code === 'SG')?.title).toBe('Singapore (SG): 400');
    expect(STEP_COLOURS).toContain(dots.find((dot) => dot.code === 'MT')?.fill);
  });

  it('draws an empty map: every country grey, a legend saying there is no data', () => {
    expect(EMPTY.countries.every((country) => country.fill === NO_DATA_COLOUR)).toBe(true);
    expect(EMPTY.legendLabels).toEqual(['No data for any country', 'No data']);
    expect(renderWorldMapSvg(new Map()).unmapped).toEqual([]);
  });

  it('labels the legend with the step boundaries, thousands separated', () => {
    const counts = new Map([['US', 2_500_000], ['DE', 12], ['CN', 40_000], ['IN', 900], ['BR', 3]]);
    const { legendLabels } = parse(renderWorldMapSvg(counts).svg);
    expect(legendLabels[0]).toBe('Count per country');
    expect(legendLabels.at(-1)).toBe('No data');
    const steps = legendLabels.slice(1, -1);
    expect(steps.length).toBeGreaterThanOrEqual(4);
    expect(steps[0]).toMatch(/^3 – \d+$/);
    expect(steps.at(-1)).toMatch(/^[\d,]+ – 2,500,000$/);
    expect(steps.join(' ')).toMatch(/\d,\d{3}/);
  });

  it('gives the same bytes for the same counts, whatever their order', () => {
    const a = renderWorldMapSvg(new Map([['US', 5], ['DE', 70], ['JP', 9000]]), { title: 't' });
    const b = renderWorldMapSvg(new Map([['JP', 9000], ['US', 5], ['DE', 70]]), { title: 't' });
    expect(b.svg).toBe(a.svg);
  });

  it('stays small enough to mail or embed', () => {
    const everyCountry = new Map(iso31661.map((country, index) => [country.alpha2, (index + 1) * 997]));
    expect(Buffer.byteLength(renderWorldMapSvg(everyCountry).svg)).toBeLessThan(300_000);
  });

  it('escapes hostile titles: markup, quotes and characters XML cannot carry', () => {
    const title = '</title><script>alert("x")</script> & \'q\' \u0000\u0007 ]]> <!--';
    const { svg } = renderWorldMapSvg(new Map(), { title });
    expect(svg).not.toContain('<script>');
    const { root } = parse(svg);
    const expected = title.replace(/[\u0000\u0007]/g, '\ufffd');
    expect(root['title']).toEqual(expect.objectContaining({ '#text': expected }));
  });

  it('cuts a heading too long for the picture, and keeps the whole title as the accessible name', () => {
    const title = `Visitors of ${'example.com, '.repeat(10)}by country 🌍`;
    const { root } = parse(renderWorldMapSvg(new Map(), { title }).svg);
    expect(root['title']).toEqual(expect.objectContaining({ '#text': title }));
    const heading = (root['text'] as Element[])[0]!['#text'] as string;
    expect(Array.from(heading)).toHaveLength(72);
    expect(heading.endsWith('…')).toBe(true);
    expect(title.startsWith(heading.slice(0, -1))).toBe(true);
  });

  it('escapes any title (fast-check)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom('\r', '\n', '\t', '&', '<', ']]>', '"', "'", '\ud800'), fc.string({ unit: 'binary', maxLength: 1 })), maxLength: 40 }), (title) => {
        const { root } = parse(renderWorldMapSvg(new Map(), { title }).svg);
        const parsed = (root['title'] as Element)['#text'] ?? '';
        // What XML 1.0 cannot carry (controls, U+FFFE, U+FFFF, a lone surrogate) reads back as U+FFFD; the rest as it was.
        // eslint-disable-next-line no-control-regex
        const carried = title.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
        expect(parsed).toBe(carried);
      }),
      { numRuns: 60 },
    );
  });

  it('never throws, draws or reports every code, and never shades a higher count lighter (fast-check)', () => {
    const code = fc.oneof(
      fc.constantFrom(...ATLAS_CODES),
      fc.constantFrom('EU', 'ZZ', 'SG', 'HK', 'XK', 'AP', 'A1', ''),
      fc.string({ maxLength: 3 }),
    );
    const count = fc.oneof(fc.integer({ min: 1, max: 50_000_000 }), fc.constantFrom(0, -1, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 1e15));
    fc.assert(
      fc.property(fc.array(fc.tuple(code, count), { maxLength: 40 }), (entries) => {
        const counts = new Map(entries);
        const { svg, unmapped } = renderWorldMapSvg(counts);
        const { countries } = parse(svg);
        const drawn = new Set(countries.flatMap((country) => (country.code === undefined ? [] : [country.code])));
        for (const key of counts.keys()) expect(drawn.has(key) !== unmapped.includes(key), key).toBe(true);
        expect(unmapped).toEqual([...unmapped].sort());

        const fillOf = new Map(countries.map((country) => [country.code, country.fill]));
        const shaded = [...counts]
          .filter(([key]) => drawn.has(key))
          .map(([key, value]) => ({ count: mapCount(value), fill: fillOf.get(key)! }))
          .sort((a, b) => (a.count ?? 0) - (b.count ?? 0));
        for (const { count: value, fill } of shaded) {
          if (value === null) expect(fill).toBe(NO_DATA_COLOUR);
          else expect(STEP_COLOURS).toContain(fill);
        }
        const ranks = shaded.filter((entry) => entry.count !== null).map((entry) => STEP_COLOURS.indexOf(entry.fill));
        for (let index = 1; index < ranks.length; index++) expect(ranks[index]!).toBeGreaterThanOrEqual(ranks[index - 1]!);
        if (ranks.length > 0 && new Set(shaded.map((entry) => entry.count)).size > 1) {
          // The largest count gets the darkest colour: the scale spans the data.
          expect(ranks.at(-1)).toBe(STEP_COLOURS.length - 1);
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('logStepScale', () => {
  it('has no steps for no counts', () => {
    const scale = logStepScale([]);
    expect(scale.steps).toEqual([]);
    expect(scale.stepOf(5)).toBeNull();
  });

  it('spaces at most six steps by powers of ten, at round boundaries, the darkest for the largest count', () => {
    const scale = logStepScale([1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]);
    expect(scale.steps.map((step) => [step.from, step.to])).toEqual([
      [1, 9],
      [10, 99],
      [100, 999],
      [1_000, 9_999],
      [10_000, 99_999],
      [100_000, 1_000_000],
    ]);
    expect(scale.steps.map((step) => step.colour)).toEqual(STEP_COLOURS);
    expect(scale.stepOf(1_000_000)?.colour).toBe(STEP_COLOURS.at(-1));
  });

  it('has one step, the darkest, for one distinct count', () => {
    const scale = logStepScale([7, 7, 7]);
    expect(scale.steps).toEqual([{ from: 7, to: 7, colour: STEP_COLOURS.at(-1) }]);
  });

  it('covers every count from the smallest to the largest, in adjacent steps (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 1e12 }), { minLength: 1, maxLength: 60 }), (counts) => {
        const scale = logStepScale(counts);
        const steps = scale.steps;
        expect(steps.length).toBeGreaterThanOrEqual(1);
        expect(steps.length).toBeLessThanOrEqual(STEP_COLOURS.length);
        expect(steps[0]!.from).toBe(Math.min(...counts));
        expect(steps.at(-1)!.to).toBe(Math.max(...counts));
        for (let index = 0; index < steps.length; index++) {
          expect(steps[index]!.to).toBeGreaterThanOrEqual(steps[index]!.from);
          if (index > 0) expect(steps[index]!.from).toBe(steps[index - 1]!.to + 1);
        }
        for (const count of counts) {
          const step = scale.stepOf(count)!;
          expect(count >= step.from && count <= step.to).toBe(true);
        }
        expect(new Set(steps.map((step) => step.colour)).size).toBe(steps.length);
      }),
    );
  });
});

describe('mapCount', () => {
  it('keeps whole counts of at least 1 and takes anything else for no data', () => {
    expect([5, 1, 2.9, 0, 0.99, -3, Number.NaN, Number.POSITIVE_INFINITY].map(mapCount)).toEqual([5, 1, 2, null, null, null, null, null]);
  });
});
