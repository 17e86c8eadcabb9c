// Shared by every lab load script: the load shape comes from environment
// variables set by tracelab (from the scenario's profile), and the summary is
// written as JSON where tracelab reads it.

// Closed model (VUS + ITERATIONS or DURATION) or open model (RATE per second
// for DURATION). Percentiles p(50) and p(95) are what tracelab reports.
export function labOptions(extra = {}) {
  const env = __ENV;
  let scenario;
  if (env.RATE) {
    scenario = {
      executor: 'constant-arrival-rate',
      rate: Number(env.RATE),
      timeUnit: '1s',
      duration: env.DURATION || '30s',
      preAllocatedVUs: Number(env.VUS || 50),
    };
  } else if (env.ITERATIONS) {
    scenario = {
      executor: 'shared-iterations',
      vus: Number(env.VUS || 1),
      iterations: Number(env.ITERATIONS),
      maxDuration: env.MAX_DURATION || '30m',
    };
  } else {
    scenario = { executor: 'constant-vus', vus: Number(env.VUS || 1), duration: env.DURATION || '30s' };
  }
  return Object.assign(
    {
      scenarios: { load: scenario },
      summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(50)', 'p(95)', 'p(99)'],
      // The lab runs on loopback; k6's own metrics should not pull in cloud
      // or usage reporting.
      noUsageReport: true,
    },
    extra,
  );
}

export function target() {
  if (!__ENV.TARGET) throw new Error('TARGET (base URL of the entrypoint service) is not set');
  return __ENV.TARGET.replace(/\/$/, '');
}

function fmt(ms) {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${ms.toFixed(1)}ms`;
}

const SUMMARY_BEGIN = '--- tracelab k6 summary ---';
const SUMMARY_END = '--- end of tracelab k6 summary ---';

// Writes the machine-readable summary to SUMMARY_FILE and a short text one
// to stdout (k6's own text summary needs a remote module this lab avoids).
export function labSummary(data) {
  const m = data.metrics;
  const d = m.http_req_duration ? m.http_req_duration.values : {};
  const reqs = m.http_reqs ? m.http_reqs.values : { count: 0, rate: 0 };
  const failed = m.http_req_failed ? m.http_req_failed.values.rate : 0;
  const text =
    `requests ${reqs.count} (${reqs.rate.toFixed(2)}/s), failed ${(failed * 100).toFixed(1)}%, ` +
    `p50 ${fmt(d['p(50)'] || 0)}, p95 ${fmt(d['p(95)'] || 0)}, max ${fmt(d.max || 0)}\n`;
  const json = JSON.stringify(data, null, 2);
  // In a Kubernetes Job there is no file tracelab can read: the summary goes
  // to the pod's log between these markers (tracelab/pkg/k6/job.go).
  if (__ENV.SUMMARY_FILE === 'stdout') {
    return { stdout: `${text}${SUMMARY_BEGIN}\n${json}\n${SUMMARY_END}\n` };
  }
  const out = { stdout: text };
  out[__ENV.SUMMARY_FILE || 'summary.json'] = json;
  return out;
}
