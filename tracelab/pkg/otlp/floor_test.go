package otlp

import (
	"strings"
	"testing"
)

// Tokenize counts the top-level values and fails on what is not JSON.
func TestTokenize(t *testing.T) {
	n, err := Tokenize(strings.NewReader(`{"a":[1,"x\"y",{"b":null}]} {"c":true}`))
	if err != nil || n != 2 {
		t.Errorf("two documents: %d values, %v", n, err)
	}
	if _, err := Tokenize(strings.NewReader(`{"a":"unterminated}`)); err == nil {
		t.Error("an unterminated string tokenized without error")
	}
	if _, err := Tokenize(strings.NewReader(`{"a":[1,2`)); err == nil {
		t.Error("a truncated document tokenized without error")
	}
}
