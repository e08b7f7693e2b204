// Distributions of durations, sampled by inverse transform: a draw is clamp(Q(u)) with Q the quantile function and
// u from the request's seeded generator. The same Q gives a profile's figures exactly (p50, p99), and the mean is the
// clamped distribution's in closed form, so the admin API and the docs show what a measurement should find, not a
// sample.
import { digest, seedFrom } from '../../lib/ids.js';
import { mulberry32 } from '../../lib/prng.js';
import type { Dist, DistSummary, Draws, Profile } from './types.js';

// Acklam's rational approximation of the inverse normal CDF (relative error below 1.15e-9 over (0, 1)).
const A = [
  -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
];
const B = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
const C = [
  -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
  2.938163982698783,
];
const D = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
const P_LOW = 0.02425;

/** The standard normal's quantile at p: -Infinity at 0, Infinity at 1. */
export function inverseNormal(p: number): number {
  if (p <= 0) return -Infinity;
  if (p >= 1) return Infinity;
  if (p < P_LOW || p > 1 - P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p < P_LOW ? p : 1 - p));
    const x =
      (((((C[0]! * q + C[1]!) * q + C[2]!) * q + C[3]!) * q + C[4]!) * q + C[5]!) /
      ((((D[0]! * q + D[1]!) * q + D[2]!) * q + D[3]!) * q + 1);
    return p < P_LOW ? x : -x;
  }
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((A[0]! * r + A[1]!) * r + A[2]!) * r + A[3]!) * r + A[4]!) * r + A[5]!) * q) /
    (((((B[0]! * r + B[1]!) * r + B[2]!) * r + B[3]!) * r + B[4]!) * r + 1)
  );
}

/** The distribution's value at u in [0, 1), clamped by its min and max and never below 0 (a wait is not negative). */
export function quantile(dist: Dist, u: number): number {
  if (typeof dist === 'number') return Math.max(0, dist);
  let v: number;
  let min = 0;
  let max = Infinity;
  switch (dist.type) {
    case 'fixed':
      return Math.max(0, dist.ms);
    case 'uniform':
      v = dist.lower + u * (dist.upper - dist.lower);
      break;
    case 'normal':
      v = dist.mean + dist.sd * inverseNormal(u);
      min = Math.max(0, dist.min ?? 0);
      max = dist.max ?? Infinity;
      break;
    case 'lognormal':
      v = dist.median * Math.exp(dist.sigma * inverseNormal(u));
      min = Math.max(0, dist.min ?? 0);
      max = dist.max ?? Infinity;
      break;
  }
  // An sd or sigma of 0 times an infinite quantile is NaN: the distribution is then its centre.
  if (Number.isNaN(v)) v = dist.type === 'normal' ? dist.mean : dist.type === 'lognormal' ? dist.median : 0;
  return Math.min(max, Math.max(min, v));
}

// erfc by a Chebyshev fit (Numerical Recipes' erfcc): fractional error below 1.2e-7 everywhere.
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const poly =
    -1.26551223 +
    t *
      (1.00002368 +
        t *
          (0.37409196 +
            t *
              (0.09678418 +
                t *
                  (-0.18628806 +
                    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const r = t * Math.exp(-z * z + poly);
  return x >= 0 ? r : 2 - r;
}

/** The standard normal's distribution function: 0 at -Infinity, 1 at Infinity. */
export const normalCdf = (x: number): number => 0.5 * erfc(-x / Math.SQRT2);
const normalPdf = (x: number): number => (Number.isFinite(x) ? Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI) : 0);

/** `value` times the chance past a clamp: 0 for a clamp that is not there (an infinite one), never NaN. */
const atClamp = (value: number, chance: number): number => (Number.isFinite(value) ? value * chance : 0);

/**
 * The mean of a distribution as drawn (clamped to [min, max], never below 0), in closed form: the clamped normal's
 * and lognormal's means are sums of normal CDF and density terms. A midpoint rule of 20,000 points per distribution
 * once cost a change of 246 profiles about a second of the event loop.
 */
function meanOf(dist: Exclude<Dist, number>): number {
  if (dist.type === 'fixed') return Math.max(0, dist.ms);
  if (dist.type === 'uniform') {
    const { lower: l, upper: u } = dist;
    if (l >= 0) return (l + u) / 2;
    return u <= 0 ? 0 : (u * u) / 2 / (u - l); // the part below 0 is drawn as 0
  }
  const a = Math.max(0, dist.min ?? 0);
  const b = Math.max(a, dist.max ?? Infinity);
  if (dist.type === 'normal') {
    const { mean: m, sd } = dist;
    if (sd === 0) return Math.min(b, Math.max(a, m));
    const alpha = (a - m) / sd;
    const beta = (b - m) / sd;
    const inside = normalCdf(beta) - normalCdf(alpha);
    return (
      a * normalCdf(alpha) + atClamp(b, 1 - normalCdf(beta)) + m * inside + sd * (normalPdf(alpha) - normalPdf(beta))
    );
  }
  const { median: m, sigma } = dist;
  if (sigma === 0) return Math.min(b, Math.max(a, m));
  const za = Math.log(a / m) / sigma;
  const zb = Math.log(b / m) / sigma;
  const body = m * Math.exp((sigma * sigma) / 2) * (normalCdf(zb - sigma) - normalCdf(za - sigma));
  return a * normalCdf(za) + atClamp(b, 1 - normalCdf(zb)) + body;
}

const summaries = new WeakMap<object, DistSummary>();

/** A distribution's figures, worked out from its quantile function (p50 and p99) and in closed form (the mean). */
export function summarize(dist: Dist): DistSummary {
  if (typeof dist === 'number' || dist.type === 'fixed') {
    const ms = quantile(dist, 0.5);
    return { mean: ms, p50: ms, p99: ms };
  }
  const known = summaries.get(dist);
  if (known) return known;
  const summary = { mean: meanOf(dist), p50: quantile(dist, 0.5), p99: quantile(dist, 0.99) };
  summaries.set(dist, summary);
  return summary;
}

/** What is wrong with a distribution that its schema cannot say (bounds out of order), or undefined. */
export function distProblem(dist: Dist): string | undefined {
  if (typeof dist === 'number') return dist >= 0 ? undefined : 'a fixed time must be at least 0';
  switch (dist.type) {
    case 'fixed':
      return dist.ms >= 0 ? undefined : 'ms must be at least 0';
    case 'uniform':
      return dist.lower <= dist.upper ? undefined : `lower (${dist.lower}) is above upper (${dist.upper})`;
    case 'normal':
      if (!(dist.sd >= 0)) return 'sd must be at least 0';
      break;
    case 'lognormal':
      if (!(dist.median > 0)) return 'median must be above 0';
      if (!(dist.sigma >= 0)) return 'sigma must be at least 0';
      break;
  }
  if (dist.min !== undefined && dist.max !== undefined && dist.min > dist.max)
    return `min (${dist.min}) is above max (${dist.max})`;
  return undefined;
}

/** The profile's distributions, by field name. */
const DIST_FIELDS = ['ttft', 'interToken', 'duration'] as const;

/** What is wrong with a profile that its schema cannot say, as `field: problem`, or undefined. */
export function profileProblem(profile: Profile): string | undefined {
  for (const field of DIST_FIELDS) {
    const dist = profile[field];
    const wrong = dist === undefined ? undefined : distProblem(dist);
    if (wrong) return `${field}: ${wrong}`;
  }
  if (profile.maxWaiting !== undefined && profile.maxRunning === undefined)
    return 'maxWaiting: a queue needs maxRunning (without a cap nothing waits)';
  return undefined;
}

/** The figures of each distribution a profile has. */
export function profileSummary(profile: Profile): Partial<Record<(typeof DIST_FIELDS)[number], DistSummary>> {
  const out: Partial<Record<(typeof DIST_FIELDS)[number], DistSummary>> = {};
  for (const field of DIST_FIELDS) {
    const dist = profile[field];
    if (dist !== undefined) out[field] = summarize(dist);
  }
  return out;
}

/** The draws of the n-th request with a profile under `seed`: its own generator, so requests do not share one. */
export function drawsFor(seed: number, n: number): Draws {
  const next = mulberry32(seedFrom(digest('latency', String(seed), String(n))));
  return { draw: (dist) => quantile(dist, next()) };
}
