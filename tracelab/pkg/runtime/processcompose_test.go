package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracelab/pkg/lab"
)

// The client logs inside the checkout: its default, one file in /tmp per
// user name, is unwritable once a user of that name was deleted and made
// again, and the client then dies before asking the server anything.
func TestProcessComposeClientLogsInTheCheckout(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(t.TempDir(), "process-compose")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"$PC_LOG_FILE\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	pc := &execProcessCompose{bin: bin, dir: root, env: environ(&lab.Checkout{Root: root, State: filepath.Join(root, ".state")}, nil)}
	out, err := pc.Call(context.Background(), "process", "list")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), filepath.Join(root, ".state", "logs", "process-compose-client.log"); got != want {
		t.Errorf("the client logs to %q, want %q", got, want)
	}
}
