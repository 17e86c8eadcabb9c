package cli

import "testing"

// --help prints the usage and does nothing else: `down --help` used to
// stop the lab. TRACELAB_ROOT names no checkout, so a command that went on
// would fail there (exit 2): exit 0 shows that none went that far.
func TestHelpDoesNothingElse(t *testing.T) {
	t.Setenv("TRACELAB_ROOT", t.TempDir())
	for _, cmd := range []string{"down", "status", "logs", "services", "up", "report", "generate", "convert"} {
		if code := Main([]string{cmd, "--help"}); code != exitOK {
			t.Errorf("%s --help: exit %d, want 0", cmd, code)
		}
	}
}
