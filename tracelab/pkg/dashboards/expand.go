package dashboards

import (
	"regexp"
	"strings"
)

// Tempo's metrics-generator, not the collector, makes these series: they
// exist only in the Kubernetes runtimes, where Tempo runs.
var tempoOnlyMetrics = regexp.MustCompile(`\btraces_service_graph_`)

// NeedsTempo tells whether a PromQL query reads metrics only Tempo makes.
func NeedsTempo(expr string) bool { return tempoOnlyMetrics.MatchString(expr) }

// Expand replaces the Grafana variables of a PromQL query with what they
// would be in Grafana for every variant over rangeSeconds of data.
func Expand(expr string, rateInterval, rangeWindow string) string {
	r := strings.NewReplacer(
		"$__rate_interval", rateInterval,
		"$__interval", rateInterval,
		"$__range", rangeWindow,
		"$variant", ".*",
	)
	return r.Replace(expr)
}
