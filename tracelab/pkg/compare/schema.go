package compare

import _ "embed"

// ResultSchema is the JSON Schema (draft 2020-12) of a Result's JSON form,
// what `tracelab compare --format json` prints. Its findings refer to
// analyze.ReportSchema as ../analyze/report.schema.json.
//
//go:embed compare.schema.json
var ResultSchema []byte
