package kubectl

import "testing"

func TestVerbSkipsFlagsAndTheirValues(t *testing.T) {
	for args, want := range map[*[]string]string{
		{"--context", "kind-tracelab", "-n", "tracelab", "rollout", "status", "deployment/gateway"}: "rollout status",
		{"--context=kind-tracelab", "get", "-o", "json", "deployments"}:                             "get deployments",
		{"-n", "tracelab", "apply", "-f", "-"}:                                                      "apply",
	} {
		if got := Verb(*args); got != want {
			t.Errorf("Verb(%q) = %q, want %q", *args, got, want)
		}
	}
}
