"""What a spring-webflux case's traces show per event loop (record/spring-webflux.sh).

usage: python3 loops.py CASE/traces.json [LOAD-RUN.json]

For the frontend (webflux-frontend): per thread.name, the outgoing calls
(CLIENT spans to the backend's /slow), the share of the thread's time they
cover (the union of their intervals over the span of the measured traces,
first root start to last root end), how many of them overlap another call on
the same thread, and how many server spans start while a call is in flight
on their thread. Then the median of the frontend's server spans, of its
calls and of the backend's server spans, and, given the load engine's --out
file, the client-side median and the request count. Standard library only.
"""
import json
import statistics
import sys
from collections import defaultdict


def attr(span, key):
    for a in span.get("attributes", []):
        if a["key"] == key:
            v = a["value"]
            return next(iter(v.values())) if v else None
    return None


def kind(span):
    k = span.get("kind")
    return {2: "server", 3: "client", "SPAN_KIND_SERVER": "server", "SPAN_KIND_CLIENT": "client"}.get(k, str(k))


def main():
    doc = json.load(open(sys.argv[1]))
    spans = []
    for rs in doc["resourceSpans"]:
        svc = next(a["value"]["stringValue"] for a in rs["resource"]["attributes"] if a["key"] == "service.name")
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                spans.append((svc, ss["scope"]["name"], s))

    def iv(s):
        return int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"])

    fe_server = [s for svc, _, s in spans if svc == "webflux-frontend" and kind(s) == "server"]
    fe_client = [s for svc, _, s in spans if svc == "webflux-frontend" and kind(s) == "client"]
    be_server = [s for svc, _, s in spans if svc == "webflux-backend" and kind(s) == "server"]
    scopes = sorted({f"{svc} {kind(s)} {scope}" for svc, scope, s in spans})
    t_lo = min(iv(s)[0] for s in fe_server)
    t_hi = max(iv(s)[1] for s in fe_server)
    window = t_hi - t_lo
    print(f"traces {len({s['traceId'] for _, _, s in spans})}, spans {len(spans)}; "
          f"frontend server spans {len(fe_server)}, calls {len(fe_client)}, backend server spans {len(be_server)}")
    print("scopes: " + "; ".join(scopes))
    print(f"window (first root start to last root end): {window / 1e6:.0f} ms")

    calls = defaultdict(list)
    for s in fe_client:
        calls[attr(s, "thread.name")].append(iv(s))
    servers = defaultdict(list)
    for s in fe_server:
        servers[attr(s, "thread.name")].append(iv(s))
    for t in sorted(set(calls) | set(servers)):
        cs = sorted(calls.get(t, []))
        busy, cur_s, cur_e = 0, None, None
        overlapping = set()
        for i, (a, b) in enumerate(cs):
            if cur_e is not None and a < cur_e:
                busy_add = max(0, b - cur_e)
                cur_e = max(cur_e, b)
                busy += busy_add
            else:
                busy += b - a
                cur_s, cur_e = a, b
        # pairs that overlap: sweep with the furthest end so far
        far_end, far_idx = None, None
        for i, (a, b) in enumerate(cs):
            if far_end is not None and a < far_end:
                overlapping.add(i)
                overlapping.add(far_idx)
            if far_end is None or b > far_end:
                far_end, far_idx = b, i
        # server spans that start while a call is in flight on this thread
        in_flight = 0
        for a, _ in servers.get(t, []):
            if any(ca < a < cb for ca, cb in cs):
                in_flight += 1
        # gap from the previous call's end (on this thread) to each server span's start
        gaps = []
        ends = sorted(b for _, b in cs)
        import bisect
        for a, _ in servers.get(t, []):
            k = bisect.bisect_right(ends, a)
            if k:
                gaps.append((a - ends[k - 1]) / 1e6)
        gap = f", server span starts {statistics.median(gaps):.2f} ms (p50) after the previous call on it ended" if gaps else ""
        print(f"  {t}: {len(servers.get(t, []))} server spans, {len(cs)} calls covering {100 * busy / window:.1f}% of the window; "
              f"{len(overlapping)} calls overlap another; {in_flight} server spans start while a call is in flight{gap}")

    def med(xs):
        return statistics.median([(b - a) / 1e6 for a, b in map(iv, xs)])

    print(f"median: frontend server span {med(fe_server):.1f} ms, its call {med(fe_client):.1f} ms, backend server span {med(be_server):.1f} ms")
    if len(sys.argv) > 2:
        summ = json.load(open(sys.argv[2]))["summary"]
        print(f"load engine: {summ['requests']} requests, {summ['throughput_rps']:.1f} req/s, "
              f"p50 {summ['p50_ms']:.1f} ms, p95 {summ['p95_ms']:.1f} ms, error rate {summ['error_rate']}")


main()
