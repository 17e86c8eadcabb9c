// Package schematest compiles the JSON Schemas tracelab's tests check its
// output against, so each test states only which schema and which output.
package schematest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Compile compiles the schema named root among resources (name -> schema
// document), with formats asserted. Names are what the schemas' relative
// $refs resolve against, e.g. "analyze/report.schema.json".
func Compile(t testing.TB, root string, resources map[string][]byte) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for name, raw := range resources {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.AddResource(name, doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Instance is v as a validator sees it: encoded as JSON and read back.
func Instance(t testing.TB, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(t, raw)
}

// Parse reads raw JSON as a validator sees it.
func Parse(t testing.TB, raw []byte) any {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}
