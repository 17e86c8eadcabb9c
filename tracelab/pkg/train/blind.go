package train

import (
	"math/rand"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"tracelab/pkg/otlp"
	"tracelab/pkg/trace"
)

// Mask is what a round changes in its recording so that the names in it do
// not give the answer away, applied the same way to the traces and to the
// labels they are graded against.
type Mask struct {
	// Services renames the services of the lab's own recordings: each
	// scenario has services of its own (catalog and pricing are nplus1's),
	// so their names would tell the scenario. Recordings of other
	// applications keep their names.
	Services map[string]string `json:"services,omitempty"`
}

// serviceAliases are the neutral names the lab's services take in a round.
var serviceAliases = []string{"alder", "aspen", "birch", "cedar", "elm", "hazel", "juniper", "larch", "maple", "rowan", "spruce", "willow"}

// labServices are the names of the lab's own services, as their recordings
// name them: what a lab round renames.
func labServices(traces []*trace.Trace) []string {
	seen := map[string]bool{}
	for _, t := range traces {
		for _, sp := range t.Spans {
			seen[sp.Service] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// newMask draws a round's renaming from its random source.
func newMask(rng *rand.Rand, services []string) Mask {
	m := Mask{Services: map[string]string{}}
	perm := rng.Perm(len(serviceAliases))
	for i, s := range services {
		m.Services[s] = serviceAliases[perm[i%len(perm)]]
	}
	return m
}

// telltales are words the authors of the recorded applications put in
// their routes to name the variant (GET /cart/nplus1 against
// /cart/batched, /hash/sync against /hash/async), and the lab's Kafka
// producer puts in its client id (ingest-small-batches against
// ingest-tuned), or an Express handler its name (express.name). A round
// writes them all, in span names and attribute values, as one neutral
// word, so a route says which endpoint it is but not which way it was
// written.
var telltales = []string{"nplus1", "batched", "parallel", "joined", "sync", "async", "chatty", "one-query",
	"same-author", "same-setting", "setting-once", "blocking", "reactive", "small-batches", "tuned"}

// telltaleWord is what a tell-tale word becomes.
const telltaleWord = "case"

var telltaleRE = regexp.MustCompile(`(^|[^A-Za-z0-9])(` + strings.Join(telltales, "|") + `)($|[^A-Za-z0-9])`)

// replaceTelltales writes tell-tale words as telltaleWord. It runs twice
// because a match consumes the separator a neighbouring word would need
// ("/sync/sync").
func replaceTelltales(s string) string {
	for range 2 {
		s = telltaleRE.ReplaceAllString(s, "${1}"+telltaleWord+"${3}")
	}
	return s
}

var wordRE = regexp.MustCompile(`[A-Za-z0-9]+`)

// rename writes every whole word that is a renamed service as its alias.
func (m Mask) rename(s string) string {
	if len(m.Services) == 0 {
		return s
	}
	return wordRE.ReplaceAllStringFunc(s, func(w string) string {
		if a, ok := m.Services[w]; ok {
			return a
		}
		return w
	})
}

// Name masks a name the application chose: a span name, a route, a label's
// operation.
func (m Mask) Name(s string) string { return replaceTelltales(m.rename(s)) }

// Service is the name a service has in the round.
func (m Mask) Service(s string) string {
	if a, ok := m.Services[s]; ok {
		return a
	}
	return s
}

// Apply masks the traces in place and rebuilds them (an operation is
// computed from a span's name and attributes, once per trace). The lab's
// own resource attributes (lab.variant) are dropped.
func (m Mask) Apply(traces []*trace.Trace) []*trace.Trace {
	resources := map[uintptr]map[string]string{} // one masked copy per shared resource
	out := make([]*trace.Trace, 0, len(traces))
	for _, t := range traces {
		for _, sp := range t.Spans {
			sp.Service = m.Service(sp.Service)
			sp.Name = m.Name(sp.Name)
			sp.Scope = m.rename(sp.Scope) // a service's own tracer: dev.tracelab.orders
			for i, kv := range sp.Attrs {
				sp.Attrs[i].Value = m.Name(kv.Value)
			}
			key := reflect.ValueOf(sp.ResourceAttrs).Pointer()
			res, ok := resources[key]
			if !ok {
				res = make(map[string]string, len(sp.ResourceAttrs))
				for k, v := range sp.ResourceAttrs {
					if !strings.HasPrefix(k, "lab.") {
						res[k] = m.rename(v)
					}
				}
				resources[key] = res
			}
			sp.ResourceAttrs = res
		}
		out = append(out, trace.New(t.ID, t.Spans))
	}
	return out
}

// readTraces parses an OTLP JSON file.
func readTraces(path string) ([]*trace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return otlp.ParseReader(f)
}

// writeTraces writes traces as plain OTLP JSON.
func writeTraces(path string, traces []*trace.Trace) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := otlp.Write(f, traces); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
