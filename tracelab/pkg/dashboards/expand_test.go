package dashboards

import "testing"

func TestExpandForTheLocalPrometheus(t *testing.T) {
	got := Expand(`sum(rate(x{lab_variant=~"$variant"}[$__rate_interval])) / increase(y[$__range])`, "30s", "10m")
	if got != `sum(rate(x{lab_variant=~".*"}[30s])) / increase(y[10m])` {
		t.Error(got)
	}
	if !NeedsTempo("rate(traces_service_graph_request_total[1m])") || NeedsTempo("traces_span_metrics_calls_total") {
		t.Error("NeedsTempo")
	}
}
