// Summary statistics of a list of samples (milliseconds or anything else).

/** @param {number[]} samples */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { n: 0, mean: NaN, median: NaN, stdev: NaN, min: NaN, p90: NaN, max: NaN };
  const mean = sorted.reduce((sum, x) => sum + x, 0) / n;
  const variance = n > 1 ? sorted.reduce((sum, x) => sum + (x - mean) ** 2, 0) / (n - 1) : 0;
  return {
    n,
    mean,
    median: quantile(sorted, 0.5),
    stdev: Math.sqrt(variance),
    min: sorted[0],
    p90: quantile(sorted, 0.9),
    max: sorted[n - 1],
  };
}

/** Linear-interpolated quantile of an ascending list. */
function quantile(sorted, q) {
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

/** Rounds for display and JSON: `digits` decimals, NaN and null kept as null. */
export function round(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return null;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
