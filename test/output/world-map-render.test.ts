/**
 * The world map as a browser shows it: Debian's chromium opens the SVG file
 * on its own (file://), the screenshot is kept in
 * test-artifacts/screenshots/, and its pixels are read back (the PNG drawn
 * into a canvas of a second page) at places whose colour is known.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_DATA_COLOUR, STEP_COLOURS } from '../../src/output/world-map-scale.js';
import { renderWorldMapSvg, worldMapPoint } from '../../src/output/world-map-svg.js';
import { findChromium, launchBrowser, screenshotPath } from '../support/browser.js';

const chromiumProgram = findChromium();
if (chromiumProgram === null) console.warn('SKIPPING test/output/world-map-render.test.ts: chromium not found on PATH or at /usr/bin/chromium (Debian package chromium)');

type Rgb = readonly [number, number, number];

function rgb(hex: string): Rgb {
  const value = Number.parseInt(hex.slice(1), 16);
  return [value >> 16, (value >> 8) & 0xff, value & 0xff];
}

/** [longitude, latitude] well inside a country, far from its borders. */
const PLACES = {
  kansas: [-98.5, 39] as const,
  centralBrazil: [-52, -11] as const,
  mongolia: [103, 46.5] as const,
  southPacific: [-130, -30] as const,
  southAtlantic: [-20, -35] as const,
  singapore: [103.82, 1.35] as const,
};

const COUNTS = new Map<string, number>([
  ['US', 250_000],
  ['CN', 60_000],
  ['DE', 21_000],
  ['IN', 9_000],
  ['BR', 40],
  ['GB', 7_500],
  ['FR', 3_100],
  ['RU', 2_000],
  ['JP', 1_200],
  ['AU', 600],
  ['ZA', 90],
  ['NG', 12],
  ['SG', 4_000],
  ['EU', 7],
]);

describe.skipIf(chromiumProgram === null)('the world map in chromium', () => {
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netintel-world-map-'));
    browser = await launchBrowser();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The colours of the screenshot `png` at `points` (pixels, top left 0,0). */
  async function pixelsAt(png: Buffer, points: ReadonlyArray<readonly [number, number]>): Promise<Rgb[]> {
    const page = await browser.newPage();
    try {
      return await page.evaluate(
        async ({ source, at }) => {
          const image = new Image();
          image.src = source;
          await image.decode();
          const canvas = document.createElement('canvas');
          canvas.width = image.naturalWidth;
          canvas.height = image.naturalHeight;
          const context = canvas.getContext('2d', { willReadFrequently: true })!;
          context.drawImage(image, 0, 0);
          return at.map(([x, y]) => {
            const [r, g, b] = context.getImageData(Math.round(x), Math.round(y), 1, 1).data;
            return [r!, g!, b!] as const;
          });
        },
        { source: `data:image/png;base64,${png.toString('base64')}`, at: points.map(([x, y]) => [x, y] as [number, number]) },
      );
    } finally {
      await page.close();
    }
  }

  async function screenshotOf(svg: string, name: string): Promise<Buffer> {
    const file = join(dir, `${name}.svg`);
    writeFileSync(file, svg);
    const page = await browser.newPage({ viewport: { width: 960, height: 580 }, deviceScaleFactor: 1 });
    try {
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(pathToFileURL(file).href);
      // A malformed document shows chromium's XML error page instead of the picture.
      expect(await page.locator('parsererror').count()).toBe(0);
      expect(await page.evaluate(() => document.documentElement.localName)).toBe('svg');
      expect(await page.title()).toBe('Addresses by country');
      expect(errors).toEqual([]);
      const path = screenshotPath(name);
      rmSync(path, { force: true });
      await page.screenshot({ path });
      return readFileSync(path);
    } finally {
      await page.close();
    }
  }

  const place = (lonLat: readonly [number, number]): [number, number] => {
    const point = worldMapPoint(lonLat);
    if (point === null) throw new Error(`cannot place ${lonLat.join(',')}`);
    return point;
  };

  it('draws the counted countries in the steps of their counts, the others grey, the ocean white', async () => {
    const png = await screenshotOf(renderWorldMapSvg(COUNTS).svg, 'world-map');
    const [us, brazil, mongolia, pacific, atlantic, singapore] = await pixelsAt(png, [
      place(PLACES.kansas),
      place(PLACES.centralBrazil),
      place(PLACES.mongolia),
      place(PLACES.southPacific),
      place(PLACES.southAtlantic),
      place(PLACES.singapore),
    ]);
    expect(us).toEqual(rgb(STEP_COLOURS.at(-1)!));
    expect(brazil).toEqual(rgb(STEP_COLOURS[0]!));
    expect(mongolia).toEqual(rgb(NO_DATA_COLOUR));
    expect(pacific).toEqual(rgb('#ffffff'));
    expect(atlantic).toEqual(rgb('#ffffff'));
    // Singapore is a dot (4,000: the step of 2,000 to 9,999).
    expect(singapore).toEqual(rgb(STEP_COLOURS[3]!));
  }, 30_000);

  it('draws an empty map: every country grey, still a picture with its legend', async () => {
    const png = await screenshotOf(renderWorldMapSvg(new Map()).svg, 'world-map-empty');
    const [us, mongolia, pacific] = await pixelsAt(png, [place(PLACES.kansas), place(PLACES.mongolia), place(PLACES.southPacific)]);
    expect(us).toEqual(rgb(NO_DATA_COLOUR));
    expect(mongolia).toEqual(rgb(NO_DATA_COLOUR));
    expect(pacific).toEqual(rgb('#ffffff'));
  }, 30_000);
});
