// Load for the nplus1 scenario: GET /catalog/summary, which makes catalog ask
// pricing for every item's price. Parameters (environment): TARGET, VUS,
// ITERATIONS or DURATION (or RATE), SUMMARY_FILE.
import http from 'k6/http';
import { check } from 'k6';
import { labOptions, labSummary, target } from './lib/lab.js';

export const options = labOptions();

const url = `${target()}/catalog/summary`;

export default function () {
  // A baseline request at full size takes ~20 s; the default 60 s timeout
  // is what the case's users hit, so keep the lab's well above it.
  const res = http.get(url, { tags: { name: 'GET /catalog/summary' }, timeout: '180s' });
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export const handleSummary = labSummary;
