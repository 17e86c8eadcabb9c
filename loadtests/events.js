// Load for the kafka-batching scenario: POST /events to ingest, on an open
// model (arrivals do not wait for answers, as on the case's load balancer).
//
// Parameters (environment): TARGET, SUMMARY_FILE, and
//   SHAPE       uniform | bursty (default uniform)
//   RATE        mean arrivals per second over the run
//   RATE_SCALE  multiplies RATE (default 1): a variant runs "twice the rate"
//               without restating the profile's numbers
//   DURATION    e.g. 60s
//   VUS         VUs allocated up front (default 100); MAX_VUS the ceiling
//               (default 4 × VUS). k6 drops arrivals when all are busy and
//               counts them in dropped_iterations.
// bursty only (case study 001: spikes of 3–4× the usual rate lasting a few
// hundred milliseconds, at random times):
//   BURST_FACTOR  spike rate / base rate (default 4)
//   BURST_MS      spike length (default 300)
//   BURST_GAP_MS  mean time between spikes (default 2000); gaps are drawn
//                 from an exponential distribution (at least 200 ms)
//   SEED          seeds the spike times (default 1), so every run of a
//                 profile sees the same spikes
// A bursty run sends the same number of events as a uniform run of the same
// RATE: the base rate between spikes is lowered to make up for them. Only
// the arrival pattern differs.
// With ITERATIONS set (the runner's warm-up) it is a closed loop of VUS.
import http from 'k6/http';
import { check } from 'k6';
import { labOptions, labSummary, target } from './lib/lab.js';

const env = __ENV;
const shape = env.SHAPE || 'uniform';
if (shape !== 'uniform' && shape !== 'bursty') throw new Error(`SHAPE must be uniform or bursty, got '${shape}'`);
const rate = Number(env.RATE || 50) * Number(env.RATE_SCALE || 1);
const vus = Number(env.VUS || 100);

function seconds(d) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(d);
  if (!m) throw new Error(`DURATION must look like 500ms, 60s or 2m, got '${d}'`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[m[2]];
}

// mulberry32: a small seeded generator, so the spikes are reproducible.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The bursty schedule as ramping-arrival-rate stages (rates per second):
// base rate, a 20 ms ramp up, the spike, a 20 ms ramp down, and so on.
export function burstStages(total, mean, factor, burstMs, gapMs, seed) {
  // The shape first, in units of the base rate; then the base rate that
  // gives the run its mean (k6 ramps linearly between stage targets).
  const next = random(seed);
  const shape = [];
  let left = total * 1000;
  const push = (ms, level) => {
    const d = Math.min(ms, left);
    if (d > 0) shape.push({ ms: Math.round(d), level });
    left -= d;
  };
  while (left > 0) {
    push(Math.max(200, -Math.log(1 - next()) * gapMs), 1);
    push(20, factor);
    push(burstMs - 20, factor);
    push(20, 1);
  }
  let area = 0;
  let prev = 1;
  for (const s of shape) {
    area += ((prev + s.level) / 2) * s.ms;
    prev = s.level;
  }
  const base = (mean * total * 1000) / area;
  const stages = shape.map((s) => ({ duration: `${s.ms}ms`, target: Math.round(base * s.level) }));
  return { base, peak: base * factor, stages };
}

function loadOptions() {
  if (env.ITERATIONS) return labOptions();
  const duration = env.DURATION || '30s';
  let scenario;
  if (shape === 'uniform') {
    scenario = { executor: 'constant-arrival-rate', rate: Math.round(rate), timeUnit: '1s', duration };
  } else {
    const b = burstStages(seconds(duration), rate, Number(env.BURST_FACTOR || 4), Number(env.BURST_MS || 300),
      Number(env.BURST_GAP_MS || 2000), Number(env.SEED || 1));
    scenario = { executor: 'ramping-arrival-rate', startRate: Math.round(b.base), timeUnit: '1s', stages: b.stages };
  }
  scenario.preAllocatedVUs = vus;
  scenario.maxVUs = Number(env.MAX_VUS || 4 * vus);
  return labOptions({ scenarios: { load: scenario } });
}

export const options = loadOptions();

const url = `${target()}/events`;
const params = { headers: { 'Content-Type': 'application/json' }, tags: { name: 'POST /events' }, timeout: '30s' };
const types = ['page_view', 'add_to_cart', 'search', 'checkout'];
// About 300 bytes on the wire, the size of a small click-stream event.
const pad = 'x'.repeat(120);

export default function () {
  const n = Math.floor(Math.random() * 1e6);
  const event = {
    type: types[n % types.length],
    source: `web-${n % 16}`,
    payload: { user: `u${n % 5000}`, path: `/products/${n % 900}`, ms: n % 3000, note: pad },
  };
  const res = http.post(url, JSON.stringify(event), params);
  check(res, { 'POST status is 202': (r) => r.status === 202 });
}

export const handleSummary = labSummary;
