package cli

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"tracelab/pkg/generate"
)

func init() {
	registerInternal("generate", "write the services' local processes, Kubernetes manifests, ports and settings declarations from services/*/service.yaml and infra/components.yaml (--check: only compare)", runGenerate)
	registerInternal("services", "list the services: NAME FRAMEWORK PORT, one a line, from services/*/service.yaml", runServices)
}

func runGenerate(args []string) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	check := fs.Bool("check", false, "write nothing; fail if a generated file is out of date")
	if code, ok := parseFlags(fs, args, 0, "usage: tracelab generate [--check]", os.Stdout); !ok {
		return code
	}
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	files, err := generate.All(co)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	stale := files.Stale(co.Root)
	if *check {
		if len(stale) > 0 {
			return fail(exitFail, "out of date with services/*/service.yaml: %s; run 'make generate'", strings.Join(stale, ", "))
		}
		fmt.Printf("generated files: up to date (%d)\n", len(files))
		return exitOK
	}
	if err := files.Write(co.Root); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	if err := files.RemoveOrphans(co.Root); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	for _, rel := range stale {
		fmt.Printf("wrote %s\n", rel)
	}
	fmt.Printf("generated files: %d, %d changed\n", len(files), len(stale))
	return exitOK
}

func runServices(args []string) int {
	if code, ok := parseFlags(flag.NewFlagSet("services", flag.ContinueOnError), args, 0, "usage: tracelab services", os.Stdout); !ok {
		return code
	}
	co, code, err := openCheckout()
	if err != nil {
		return fail(code, "%v", err)
	}
	comps, err := co.Components()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	for _, s := range comps.Services {
		fmt.Printf("%s %s %d\n", s.Name, s.Framework.Name, s.Port)
	}
	return exitOK
}
