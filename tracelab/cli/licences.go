package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"tracelab/pkg/lab"
	"tracelab/pkg/licences"
)

func init() {
	registerInternal("licences", "check every Go module, Maven artifact and npm package the lab builds against infra/local/licences.yaml (AGPL, SSPL, BUSL or no licence fail)", runLicences)
	withSubcommands("licences", licencesUsage)
}

const licencesUsage = `usage: tracelab licences check [-v] [--maven-repo DIR]

  -v                  list every package checked and the licences found
  --maven-repo DIR    Maven's local repository, where the POMs are read (default ~/.m2/repository)`

func runLicences(args []string) int {
	fs := flag.NewFlagSet("licences", flag.ContinueOnError)
	home, _ := os.UserHomeDir()
	repo := fs.String("maven-repo", filepath.Join(home, ".m2", "repository"), "Maven's local repository, where the POMs are read")
	verbose := fs.Bool("v", false, "list every package checked and the licences found")
	short, _, _ := strings.Cut(licencesUsage, "\n")
	if len(args) == 0 || args[0] != "check" {
		return fail(exitUsage, "licences: %s", short)
	}
	if code, ok := parseFlags(fs, args[1:], 0, licencesUsage, os.Stdout); !ok {
		return code
	}
	root, err := lab.Find()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	policy, err := licences.LoadPolicy(filepath.Join(root, licences.PolicyFile))
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	gate := &licences.Gate{
		Root: root, Policy: policy, MavenRepo: *repo, Progress: os.Stderr,
		Download: licences.GoModDownload, Collect: licences.MvnCollect,
	}
	r, err := gate.Run()
	if err != nil {
		return fail(exitRuntime, "licences: %v", err)
	}
	if *verbose {
		for _, c := range r.Checked {
			fmt.Printf("licences: %s\n", c)
		}
	}
	for _, e := range r.Exceptions {
		fmt.Printf("licences: exception: %s\n", e)
	}
	for _, v := range r.Violations {
		fmt.Printf("licences: %s\n", v)
	}
	if r.FailedFast {
		return fail(exitFail, "licences: %d module(s) on the deny list; nothing else was checked", len(r.Violations))
	}
	counts := fmt.Sprintf("%d Go modules, %d Maven artifacts", r.GoModules, r.MavenArtifacts)
	if r.NpmPackages > 0 {
		counts += fmt.Sprintf(", %d npm packages", r.NpmPackages)
	}
	if len(r.Violations) > 0 {
		return fail(exitFail, "licences: %s checked, %d refused", counts, len(r.Violations))
	}
	fmt.Printf("licences: %s checked, 0 denied\n", counts)
	return exitOK
}
