// Command tempoconfigcheck is Tempo's `-config.verify` without the rest of
// Tempo, which cannot be built here (k8s/README.md, "The offline checks"):
// it loads a configuration file the way cmd/tempo's loadConfig does (the
// defaults of every module, then the file decoded strictly, so an unknown
// or misspelt key fails) and fails on Tempo's configuration warnings, as
// -config.verify does. It takes Tempo's flags, so `make test-k8s` passes it
// the Tempo container's arguments.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/drone/envsubst"
	"github.com/grafana/tempo/cmd/tempo/app"
	"gopkg.in/yaml.v2"
)

func main() {
	fs := flag.NewFlagSet("tempo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	file := fs.String("config.file", "", "")
	expandEnv := fs.Bool("config.expand-env", false, "")
	// Tempo's other flags (-target, ...) are registered by the config itself.
	var cfg app.Config
	cfg.RegisterFlagsAndApplyDefaults("", fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		fail("%v", err)
	}
	if *file == "" {
		fail("usage: tempoconfigcheck -config.file=FILE [-config.expand-env] [other Tempo flags]")
	}
	data, err := os.ReadFile(*file)
	if err != nil {
		fail("%v", err)
	}
	if *expandEnv {
		s, err := envsubst.EvalEnv(string(data))
		if err != nil {
			fail("failed to expand env vars from configFile %s: %v", *file, err)
		}
		data = []byte(s)
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		fail("failed to parse configFile %s: %v", *file, err)
	}
	// Tempo parses its command line again over the file: flags win.
	if err := fs.Parse(os.Args[1:]); err != nil {
		fail("%v", err)
	}
	if warnings := cfg.CheckConfig(); len(warnings) > 0 {
		for _, w := range warnings {
			fmt.Fprintf(os.Stderr, "configuration warning: %s", w.Message)
			if w.Explain != "" {
				fmt.Fprintf(os.Stderr, " (%s)", w.Explain)
			}
			fmt.Fprintln(os.Stderr)
		}
		os.Exit(1)
	}
	fmt.Printf("%s: valid Tempo configuration\n", *file)
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "tempoconfigcheck: "+format+"\n", a...)
	os.Exit(1)
}
