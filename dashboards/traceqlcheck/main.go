// Command traceqlcheck parses TraceQL queries with Tempo's own parser
// (github.com/grafana/tempo/pkg/traceql), the one Tempo runs. Tempo cannot
// run on the lab's machines, so this is how a query in a dashboard or a
// guide is proven to be valid TraceQL before it reaches a cluster.
//
// Input on stdin, one query per line: "WHERE<TAB>QUERY", as printed by
// `tracelab dashboards queries --lang traceql`. Exit 1 if any query fails.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/grafana/tempo/pkg/traceql"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n, bad := 0, 0
	for sc.Scan() {
		where, query, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		n++
		if _, err := traceql.Parse(query); err != nil {
			bad++
			fmt.Printf("FAIL %s: %s\n     %v\n", where, query, err)
		}
	}
	if n == 0 {
		fmt.Fprintln(os.Stderr, "traceqlcheck: no queries on stdin")
		os.Exit(2)
	}
	fmt.Printf("traceql: %d queries parsed by Tempo's parser, %d failed\n", n, bad)
	if bad > 0 {
		os.Exit(1)
	}
}
