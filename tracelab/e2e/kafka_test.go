//go:build e2e

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKafkaBatchingSmoke is the scenario's smoke profile on the real
// stack: the bursty baseline breaks the objective and is flagged, the tuned
// producer meets it and is not, and ledger stored every accepted event.
// Every check of the run is required: toxiproxy's KAFKA_LATENCY_MS fixes the
// small-batch producer's round trip, so its knee no longer moves with the
// machine's load (scenarios/kafka-batching/README.md).
func TestKafkaBatchingSmoke(t *testing.T) {
	res := runSmoke(t, "kafka-batching")
	for _, v := range res.Variants {
		if v.Delivery == nil || v.Delivery.Accepted == 0 || v.Delivery.Stored != v.Delivery.Accepted {
			t.Errorf("%s: delivery %+v; want every accepted event stored once", v.Variant, v.Delivery)
		}
		found := findings(v, "kafka-producer-contention")
		switch v.Variant {
		case "baseline":
			if len(found) != 1 {
				t.Fatalf("baseline: %d kafka-producer-contention findings, want 1", len(found))
			}
			f := found[0]
			if f.Service != "ingest" || f.Evidence["client_metrics_source"] != "prometheus" {
				t.Errorf("baseline finding: %s, metrics from %v; want ingest, confirmed by Prometheus", f.Service, f.Evidence["client_metrics_source"])
			}
		default:
			if len(found) != 0 {
				t.Errorf("%s: unexpected kafka-producer-contention: %s", v.Variant, found[0].Summary)
			}
		}
	}
	assertNothingLeft(t)
}

type answer struct {
	status int
	body   string
	took   time.Duration
}

func post(t *testing.T, url, body string) answer {
	t.Helper()
	start := time.Now()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b), time.Since(start)}
}

// TestIngestRefusesBadEventsAndAnswers503WithoutBroker runs ingest against
// the real broker: a bad event is refused with a 4xx and never reaches the
// topic (the next good event takes the very next offset), and with the
// broker stopped a POST answers 503 within the publish timeout.
func TestIngestRefusesBadEventsAndAnswers503WithoutBroker(t *testing.T) {
	if r := tracelab(t, nil, "up", "ingest"); r.code != 0 {
		t.Fatalf("tracelab up ingest exited %d: %s", r.code, r.stderr)
	}
	defer func() {
		tracelab(t, nil, "down")
		assertNothingLeft(t)
	}()
	url := "http://127.0.0.1:" + labPorts(t)["INGEST_PORT"] + "/events"
	good := `{"type":"page_view","source":"e2e","payload":{"n":1}}`
	offset := func(a answer) int64 {
		t.Helper()
		if a.status != http.StatusAccepted {
			t.Fatalf("good event: %d %s", a.status, a.body)
		}
		var acc struct{ Offset int64 }
		if err := json.Unmarshal([]byte(a.body), &acc); err != nil {
			t.Fatal(err)
		}
		return acc.Offset
	}
	first := offset(post(t, url, good))
	bad := map[string]struct {
		body   string
		status int
	}{
		"not JSON":                {`{"type":"page_view"`, 400},
		"not an object":           {`["page_view"]`, 400},
		"no type":                 {`{"source":"e2e"}`, 400},
		"payload not JSON object": {`{"type":"a","source":"e2e","payload":3}`, 400},
		"empty":                   {``, 400},
		"oversized":               {`{"type":"a","source":"e2e","payload":{"pad":"` + strings.Repeat("x", 5000) + `"}}`, 413},
	}
	for name, c := range bad {
		if a := post(t, url, c.body); a.status != c.status || !strings.Contains(a.body, `"detail"`) {
			t.Errorf("%s: %d %s; want %d with a problem detail", name, a.status, a.body, c.status)
		}
	}
	if next := offset(post(t, url, good)); next != first+1 {
		t.Errorf("good events at offsets %d and %d: something was published in between", first, next)
	}

	tools, err := checkout(t).Tools()
	if err != nil {
		t.Fatal(err)
	}
	stop := exec.Command(tools["PROCESS_COMPOSE_BIN"], "process", "stop", "kafka", "--unix-socket", filepath.Join(root(t), ".state", "process-compose.sock"))
	// The client's log goes where tracelab's own client calls put it
	// (pkg/runtime/processcompose.go says why not /tmp).
	stop.Env = append(os.Environ(), "PC_LOG_FILE="+filepath.Join(root(t), ".state", "logs", "process-compose-client.log"))
	if out, err := stop.CombinedOutput(); err != nil {
		t.Fatalf("stopping kafka: %v: %s", err, out)
	}
	const timeout = 5 * time.Second // INGEST_PUBLISH_TIMEOUT_MS's default
	for i := 0; i < 2; i++ {        // the first send finds the connection gone, the second has no broker at all
		a := post(t, url, good)
		if a.status != http.StatusServiceUnavailable || !strings.Contains(a.body, "did not acknowledge") {
			t.Errorf("broker down: %d %s; want 503 saying the broker did not acknowledge", a.status, a.body)
		}
		if a.took > timeout+2*time.Second {
			t.Errorf("broker down: answered after %s; the publish timeout is %s", a.took, timeout)
		}
	}
}
