// Command tracelab is the Trace Pathology Lab's CLI: it runs scenarios on a
// runtime, fetches their traces, analyzes them and judges the fix.
package main

import (
	"os"

	"tracelab/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
