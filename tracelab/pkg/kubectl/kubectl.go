// Package kubectl runs the kubectl on the PATH, for the Kubernetes runtime
// and the in-cluster load alike, with failures of one line that name the
// call.
package kubectl

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Run runs kubectl with args, and stdin (nil for none), and returns its
// standard output. A failure says which call it was and kubectl's first
// line of complaint, which is the one that says why.
func Run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		msg, _, _ = strings.Cut(msg, "\n")
		return out, fmt.Errorf("kubectl %s: %s", Verb(args), msg)
	}
	return out, nil
}

// Verb names a kubectl call by its command ("rollout status"), without the
// context, namespace, output and file flags and their values.
func Verb(args []string) string {
	var words []string
	for i := 0; i < len(args) && len(words) < 2; i++ {
		if strings.HasPrefix(args[i], "-") {
			if !strings.Contains(args[i], "=") && i+1 < len(args) && (args[i] == "--context" || args[i] == "-n" || args[i] == "-o" || args[i] == "-f") {
				i++
			}
			continue
		}
		words = append(words, args[i])
	}
	return strings.Join(words, " ")
}
