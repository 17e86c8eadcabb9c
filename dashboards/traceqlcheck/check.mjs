// The TraceQL syntax check of `make test-dashboards`, with Grafana's TraceQL
// grammar (@grafana/lezer-traceql, Apache-2.0) instead of Tempo's parser,
// which is AGPL-3.0 and so not linked into the lab (dashboards/README.md,
// "What is checked here, and what is not").
//
// Input on stdin, one query per line: "WHERE<TAB>QUERY", as printed by
// `tracelab dashboards queries --lang traceql`. One line per broken query,
// and exit 1; exit 2 when there is no query at all, so that an extraction
// that silently finds nothing cannot pass.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parser } from "@grafana/lezer-traceql";

// Lezer never throws: it recovers from an error by inserting an error node
// and carrying on, so a tree with any error node is a query that does not
// parse. The first one is where a reader should look.
export function syntaxError(query) {
  if (query.trim() === "") return "empty query";
  let at = -1;
  parser.parse(query).iterate({
    enter(node) {
      if (at >= 0) return false;
      if (node.type.isError) at = node.from;
    },
  });
  if (at < 0) return null;
  const near = query.slice(at, at + 12);
  return `syntax error at column ${at + 1}` + (near.trim() ? ` near "${near}"` : " (the query ends too soon)");
}

// check reads the WHERE<TAB>QUERY lines and returns the problem lines and how
// many queries it read.
export function check(input) {
  const problems = [];
  let n = 0;
  for (const line of input.split("\n")) {
    if (line.trim() === "") continue;
    const tab = line.indexOf("\t");
    if (tab < 0) {
      problems.push(`traceqlcheck: not "WHERE<TAB>QUERY": ${line}`);
      continue;
    }
    n++;
    const where = line.slice(0, tab), query = line.slice(tab + 1);
    const err = syntaxError(query);
    if (err) problems.push(`traceqlcheck: ${where}: ${err}: ${query}`);
  }
  return { n, problems };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { n, problems } = check(readFileSync(0, "utf8"));
  if (n === 0 && problems.length === 0) {
    console.error("traceqlcheck: no queries on stdin; pipe in `tracelab dashboards queries --lang traceql`");
    process.exit(2);
  }
  for (const p of problems) console.error(p);
  console.log(`traceql: ${n} ${n === 1 ? "query" : "queries"} parsed by the TraceQL grammar (@grafana/lezer-traceql), ${problems.length} failed`);
  if (problems.length > 0) process.exit(1);
}
