// k6 load for record/quarkus-reactive.sh.
//   URL      the endpoint to call
//   MODE     closed: VUS clients, each sending its next request as soon as
//                    the last one answered (the 20-client runs);
//            open:   RATE requests per second whatever the answers (the
//                    low-load runs), from up to VUS clients
//   DURATION how long, e.g. 15s
//   SUMMARY  where to write k6's end-of-test summary as JSON
import http from 'k6/http';

const closed = __ENV.MODE === 'closed';

export const options = {
  scenarios: {
    load: closed
      ? { executor: 'constant-vus', vus: Number(__ENV.VUS), duration: __ENV.DURATION }
      : {
          executor: 'constant-arrival-rate',
          rate: Number(__ENV.RATE),
          timeUnit: '1s',
          duration: __ENV.DURATION,
          preAllocatedVUs: Number(__ENV.VUS),
        },
  },
  summaryTrendStats: ['med', 'p(95)', 'max'],
};

export default function () {
  http.get(__ENV.URL);
}

export function handleSummary(data) {
  return { [__ENV.SUMMARY]: JSON.stringify(data) };
}
