package analyze

import _ "embed"

// ReportSchema is the JSON Schema (draft 2020-12) of a Report's JSON form,
// what `tracelab analyze --format json` prints.
//
//go:embed report.schema.json
var ReportSchema []byte
