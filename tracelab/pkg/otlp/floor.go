package otlp

import (
	"fmt"
	"io"
)

// Tokenize reads every JSON value in r with the parser's lexer and builds
// nothing: each string is found and its escapes checked, each number and
// literal read, each bracket counted (as skip does: not matched by kind). It is the floor under any parse of
// the same input, what reading the bytes as JSON costs at the least, and
// the scale benchmark reports the parse's cost against it. It returns the
// count of top-level values.
func Tokenize(r io.Reader) (int, error) {
	lim := DefaultLimits.resolved()
	lx := newLexer(r, lexerBufSize, lim)
	n := 0
	for lx.peek() != 0 {
		if err := lx.skip(); err != nil {
			return n, err
		}
		n++
	}
	if lx.rerr != nil {
		return n, fmt.Errorf("reading input: %v", lx.rerr)
	}
	return n, nil
}
