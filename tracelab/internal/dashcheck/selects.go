// Package dashcheck proves the dashboards' queries without Grafana or
// Tempo, which cannot run on the lab's machines: PromQL against the local
// Prometheus, TraceQL on a run's traces with an evaluator of the subset the
// lab uses (pkg/traceql). Only tests use it (the e2e smoke runs and the unit tests on the
// recorded corpus); the tracelab binary does not.
package dashcheck

import (
	"fmt"

	"tracelab/pkg/dashboards"
	"tracelab/pkg/trace"
	"tracelab/pkg/traceql"
)

// Role is what a dashboard's TraceQL query is for, and so which traces it
// must select.
type Role int

const (
	// Browse queries list traces whatever their shape (the slowest, a
	// route with its calls): they must select some trace of the run.
	Browse Role = iota
	// Pathology queries find the pathology: they must select baseline
	// traces, and the fix's at most a separation-th as often.
	Pathology
	// Fix queries find the fix's shape: the reverse of Pathology.
	Fix
)

// separation is how many times more often a pathology query must select
// a baseline trace than a fixed one (a fix query the reverse). It is not
// "never": on a 2-core machine a fixed request now and then stalls behind
// a GC pause or a descheduled thread (one CI run had 1 of kafka-batching's
// 602 fixed traces with a send over 50 ms, the threshold then), and one such trace does not
// make the panel mislead. At ten times, a panel over a window that mixes
// equal numbers of both variants still shows the pathology's traces ten
// to one.
const separation = 10

// roles names the queries that tell a baseline from its fix, by where
// dashboards.Query puts them ("file: panel title (refId)"); every other
// TraceQL query of a dashboard is Browse. A query belongs here when its
// panel exists to show the pathology (or the fix) alone; one that also
// lists healthy traces, such as the overview's slowest traces, does not.
//
// antpath's "Requests whose server span dwarfs its controller span" is not
// one: under the same load the fix's requests also wait before their
// handler now and then (252 of the 1,500 fixed traces of the recorded run
// against 445 of the baseline's), so that pathology shows in how many
// traces the query selects, not in which.
var roles = map[string]Role{
	"chatty-db.json: Traces with 7 or more database round trips (A)":                      Pathology,
	"eventloop.json: Slow POST /orders with a customers call on an event-loop thread (A)": Pathology,
	"kafka-batching.json: Slow Kafka sends (A)":                                           Pathology,
	"nplus1.json: Traces with more than 100 sequential price calls (A)":                   Pathology,
	"nplus1.json: Traces with the batch call (the fix) (A)":                               Fix,
}

// RoleOf is the role of a dashboard query.
func RoleOf(q dashboards.Query) Role { return roles[q.Where] }

// Selects checks that a query picks the traces its role says from a
// scenario's baseline and fixed traces, and says why not otherwise.
func Selects(q *traceql.Query, role Role, baseline, fixed []*trace.Trace) error {
	if role != Browse && (len(baseline) == 0 || len(fixed) == 0) {
		return fmt.Errorf("needs traces of both variants to tell them apart; got %d baseline and %d fixed", len(baseline), len(fixed))
	}
	inBase, inFixed := count(q, baseline), count(q, fixed)
	switch role {
	case Pathology:
		return separates(q, baseline, fixed, inBase, inFixed, "baseline", "fixed", "the pathology from its fix")
	case Fix:
		return separates(q, fixed, baseline, inFixed, inBase, "fixed", "baseline", "the fix from the pathology")
	default:
		if inBase+inFixed == 0 {
			all := append(append([]*trace.Trace{}, baseline...), fixed...)
			return fmt.Errorf("selects none of the run's %d traces: %s", len(all), q.Explain(all))
		}
	}
	return nil
}

// separates checks that a query selects some of the traces it is for
// (want), and those it is not for (other) at most a separation-th as often.
func separates(q *traceql.Query, want, other []*trace.Trace, inWant, inOther int, wantName, otherName, tells string) error {
	if inWant == 0 {
		return fmt.Errorf("selects none of the %d %s traces: %s", len(want), wantName, q.Explain(want))
	}
	// Shares compared without division: inWant/len(want) against
	// separation × inOther/len(other).
	if inWant*len(other) < separation*inOther*len(want) {
		return fmt.Errorf("selects %d of the %d %s traces too, against %d of the %d %s ones (less than %d times as often): it does not tell %s",
			inOther, len(other), otherName, inWant, len(want), wantName, separation, tells)
	}
	return nil
}

// count is how many of the traces the query selects.
func count(q *traceql.Query, traces []*trace.Trace) int {
	n := 0
	for _, t := range traces {
		if q.Match(t) {
			n++
		}
	}
	return n
}
