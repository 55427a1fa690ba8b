/**
 * The colour steps of the world map: counts per country are skewed (a few
 * countries hold most addresses), so the steps are spaced on a logarithmic
 * scale between the smallest and the largest count, their boundaries rounded
 * to 1, 2 or 5 times a power of ten so that a legend reads easily.
 */

/**
 * ColorBrewer's sequential "Blues" (7 classes) without its near-white first
 * class, which a reader could not tell from the background: a single-hue
 * ramp stays readable with every form of colour blindness and in grey print.
 */
export const STEP_COLOURS: readonly string[] = ['#c6dbef', '#9ecae1', '#6baed6', '#4292c6', '#2171b5', '#084594'];

/** Fill of a country without a count. */
export const NO_DATA_COLOUR = '#dcdcdc';

export interface CountStep {
  /** The smallest count of the step. */
  readonly from: number;
  /** The largest count of the step (equal to `from` for a step of one value). */
  readonly to: number;
  readonly colour: string;
}

export interface StepScale {
  readonly steps: readonly CountStep[];
  /** The step a count falls in, or null for a count of no step (below 1). */
  stepOf(count: number): CountStep | null;
}

/**
 * A count as the map draws it: a whole number of at least 1, else null
 * (zero, negative, NaN and infinite counts are no data).
 */
export function mapCount(count: number): number | null {
  if (!Number.isFinite(count)) return null;
  const whole = Math.floor(count);
  return whole >= 1 ? whole : null;
}

/** The nearest of 1, 2 and 5 times a power of ten to `value` (> 0), nearest on a log scale. */
function niceBoundary(value: number): number {
  const exponent = Math.floor(Math.log10(value));
  const candidates = [1, 2, 5, 10].map((mantissa) => mantissa * 10 ** exponent);
  let best = candidates[0]!;
  for (const candidate of candidates) {
    if (Math.abs(Math.log(candidate / value)) < Math.abs(Math.log(best / value))) best = candidate;
  }
  // 10 ** exponent is inexact for large exponents; counts are whole numbers.
  return Math.round(best);
}

/**
 * The steps for a set of counts (whole numbers >= 1; see `mapCount`): at most
 * STEP_COLOURS.length steps, fewer when there are fewer distinct counts or
 * when rounded boundaries coincide; none for no counts. A higher count never
 * falls in a lighter step than a lower one.
 */
export function logStepScale(counts: Iterable<number>): StepScale {
  let low = Infinity;
  let high = -Infinity;
  const distinct = new Set<number>();
  for (const count of counts) {
    distinct.add(count);
    low = Math.min(low, count);
    high = Math.max(high, count);
  }
  if (distinct.size === 0) return { steps: [], stepOf: () => null };

  const wanted = Math.min(STEP_COLOURS.length, distinct.size);
  const boundaries: number[] = [];
  for (let index = 1; index < wanted; index++) {
    const raw = Math.exp(Math.log(low) + (index * (Math.log(high) - Math.log(low))) / wanted);
    const boundary = niceBoundary(raw);
    if (boundary > low && boundary <= high && boundary !== boundaries.at(-1)) boundaries.push(boundary);
  }

  const stepCount = boundaries.length + 1;
  const steps: CountStep[] = [];
  for (let index = 0; index < stepCount; index++) {
    const colourIndex = stepCount === 1 ? STEP_COLOURS.length - 1 : Math.round((index * (STEP_COLOURS.length - 1)) / (stepCount - 1));
    steps.push({
      from: index === 0 ? low : boundaries[index - 1]!,
      to: index === stepCount - 1 ? high : boundaries[index]! - 1,
      colour: STEP_COLOURS[colourIndex]!,
    });
  }
  return {
    steps,
    stepOf(count) {
      if (!(count >= 1)) return null;
      let index = 0;
      while (index < boundaries.length && count >= boundaries[index]!) index++;
      return steps[index]!;
    },
  };
}
