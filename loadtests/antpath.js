// Load for the antpath scenario: requests spread evenly over the gateway's
// whole route table, open model (RATE per second for DURATION), so both
// variants receive the same offered load however fast they answer.
// Parameters (environment): TARGET, RATE and DURATION (or VUS and
// ITERATIONS, as for the warm-up), SUMMARY_FILE.
import http from 'k6/http';
import { check } from 'k6';
import { labOptions, labSummary, target } from './lib/lab.js';

export const options = labOptions();

const base = target();

// The gateway lists its own table (GET /api/routes), so the load follows the
// routes it actually serves. Each route comes with a sample path, its method
// and the status it answers.
//
// Each route's URL and name are worked out here, once: k6 shares the two
// cores with the gateway, and the CPU it spends per request caps the rate it
// can offer.
export function setup() {
  const res = http.get(`${base}/api/routes`, { tags: { name: 'GET /api/routes' } });
  if (res.status !== 200) throw new Error(`GET /api/routes answered ${res.status}`);
  return res.json().routes.map((route) => ({
    method: route.method,
    url: `${base}${route.sample}`,
    status: route.status,
    params: { tags: { name: nameOf(route) } },
  }));
}

// One k6 tag per operation (version and resource replaced by placeholders),
// not per route: 1,925 distinct names would bury the summary.
function nameOf(route) {
  const m = route.pattern.match(/^\/api\/tenants\/\{tenant\}\/regions\/\{region\}\/v\d+\/projects\/\{project\}\/[a-z-]+(.*)$/);
  if (!m) return `${route.method} ${route.pattern}`;
  return `${route.method} /api/tenants/{tenant}/regions/{region}/v{n}/projects/{project}/{resource}${m[1].replace(/:[^}]*\}/g, '}')}`;
}

export default function (routes) {
  const route = routes[Math.floor(Math.random() * routes.length)];
  const res = http.request(route.method, route.url, null, route.params);
  check(res, { 'expected status': (r) => r.status === route.status });
}

export const handleSummary = labSummary;
