// Run by `make test-dashboards` (node --test), which sets TRACELAB_BIN.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { check, syntaxError } from "./check.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const labRoot = join(here, "..", "..");

// Each broken the way a hand edit breaks a query.
const broken = {
  "a condition cut short": '{ resource.service.name = "orders" && }',
  "an unclosed filter": "{ kind = server ",
  "a stray brace": '{ span.http.route = "/orders" }}',
  "a unit apart from its number": "{ duration > 2 ms }",
  "a span kind that does not exist": "{ kind = sever }",
  "a misspelt intrinsic": "{ duraton > 1s }",
  "an unclosed string": '{ span.db.system = "postgresql }',
  "a structural operator with nothing after it": '{ resource.service.name = "ingest" } >> ',
  "an aggregate with no comparison": '{ span.db.system = "postgresql" } | count() >=',
  "an unclosed aggregate": '{ span.db.system = "postgresql" } | count( > 7',
  "an empty query": "",
};

for (const [name, query] of Object.entries(broken)) {
  test(`rejects ${name}`, () => {
    assert.notEqual(syntaxError(query), null, `accepted ${JSON.stringify(query)}`);
  });
}

// TraceQL the lab does not use yet: the grammar is the whole language, not
// the subset tracelab's evaluator reads (tracelab/internal/dashcheck).
test("accepts TraceQL beyond the lab's subset", () => {
  for (const q of [
    '{ span.http.status_code >= 500 } | avg(duration) > 1s',
    "{ status = error } | select(span.db.statement)",
    '{ name = "a" } ~ { name = "b" }',
    "{ trace:duration > 1s }",
    "{}",
  ]) {
    assert.equal(syntaxError(q), null, q);
  }
});

test("one line per broken query, naming where it is", () => {
  const { n, problems } = check('nplus1.json: Good (A)\t{ kind = server }\nscenarios/x/README.md:3\t{ kind = server && }\n');
  assert.equal(n, 2);
  assert.deepEqual(problems, [
    'traceqlcheck: scenarios/x/README.md:3: syntax error at column 20 near "}": { kind = server && }',
  ]);
});

test("fails on a broken query and on no input, from the command line", () => {
  const run = (input) => spawnSync(process.execPath, [join(here, "check.mjs")], { input, encoding: "utf8" });
  const bad = run("x.json: Broken (A)\t{ kind = sever }\n");
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /^traceqlcheck: x\.json: Broken \(A\): syntax error at column 10 near "sever }"/);
  assert.equal(run("").status, 2);
});

test("every TraceQL query of the dashboards and scenario guides parses", (t) => {
  const bin = process.env.TRACELAB_BIN;
  assert.ok(bin, "TRACELAB_BIN is not set: make test-dashboards sets it to the tracelab it builds");
  const out = execFileSync(bin, ["dashboards", "queries", "--lang", "traceql"], { cwd: labRoot, encoding: "utf8" });
  const { n, problems } = check(out);
  assert.ok(n > 0, "tracelab printed no TraceQL query");
  assert.deepEqual(problems, []);
  t.diagnostic(`${n} queries`);
});
