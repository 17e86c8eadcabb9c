package otlp

import (
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// lexer is a small streaming JSON scanner. encoding/json decodes by
// reflection and allocates for every value; OTLP files are mostly spans of
// a fixed shape, and a million of them took 25 s that way. The lexer reads
// through a buffer that only grows to the size of the largest single
// token, hands out strings as byte slices into that buffer (so object keys
// and interned values cost no allocation), and leaves the structure to the
// parser.
type lexer struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unread byte
	end  int   // end of valid bytes
	base int64 // input offset of buf[0]
	eof  bool
	rerr error // a read error other than io.EOF
	// lerr is a *LimitError: once set, the lexer reads no more and every
	// error it reports is this one.
	lerr error

	maxToken int   // bytes of one string's content or one scalar
	maxInput int64 // bytes read from r
}

func newLexer(r io.Reader, bufSize int, lim Limits) *lexer {
	return &lexer{r: r, buf: make([]byte, max(bufSize, 1)), maxToken: lim.MaxValueBytes, maxInput: lim.MaxInputBytes}
}

// tokenTooLong records that the token starting at buf[start] is longer
// than maxToken.
func (l *lexer) tokenTooLong(start int) error {
	if l.lerr == nil {
		l.lerr = &LimitError{Limit: "value size (bytes of one string or number)", Max: int64(l.maxToken), Flag: "--max-attr-bytes", Offset: l.base + int64(start)}
	}
	return l.lerr
}

// offset is the input position of the next unread byte, for messages.
func (l *lexer) offset() int64 { return l.base + int64(l.pos) }

// more reads more input, first discarding the bytes before keep (already
// consumed). Indexes into buf held by the caller move down by keep, whether
// or not anything was read. It reports false when no more input is
// available.
func (l *lexer) more(keep int) bool {
	n := copy(l.buf, l.buf[keep:l.end])
	l.base += int64(keep)
	l.pos -= keep
	l.end = n
	if l.eof || l.lerr != nil {
		return false
	}
	if l.end == len(l.buf) { // one token fills the buffer: grow it
		// A token that fills a buffer longer than maxToken (plus the
		// closing quote) is too long already: the buffer never grows past
		// what the longest allowed token needs.
		if l.end > l.maxToken {
			l.pos = l.end
			l.tokenTooLong(0)
			return false
		}
		n := 2 * len(l.buf)
		if l.maxToken < n {
			n = l.maxToken + 1
		}
		nb := make([]byte, n)
		copy(nb, l.buf[:l.end])
		l.buf = nb
	}
	for {
		room := l.buf[l.end:]
		if left := l.maxInput - (l.base + int64(l.end)); left < int64(len(room)) {
			// One byte past the limit tells a longer input from one that
			// ends exactly at it.
			room = room[:max(left+1, 0)]
		}
		m, err := l.r.Read(room)
		l.end += m
		if l.base+int64(l.end) > l.maxInput {
			l.end--
			l.lerr = &LimitError{Limit: "input size (bytes)", Max: l.maxInput, Flag: "--max-response-bytes", Offset: l.maxInput}
			return m > 1
		}
		if err != nil {
			l.eof = true
			if err != io.EOF {
				l.rerr = err
			}
			return m > 0
		}
		if m > 0 {
			return true
		}
	}
}

// peek skips whitespace and returns the next byte without consuming it,
// or 0 at the end of the input.
func (l *lexer) peek() byte {
	// Small enough to be inlined: compact JSON, what producers write, has
	// no whitespace between tokens, and the parser peeks before each one.
	if l.pos < l.end && l.buf[l.pos] > ' ' {
		return l.buf[l.pos]
	}
	return l.peekSlow()
}

func (l *lexer) peekSlow() byte {
	for {
		for l.pos < l.end {
			switch c := l.buf[l.pos]; c {
			case ' ', '\n', '\r', '\t':
				l.pos++
			default:
				return c
			}
		}
		if !l.more(l.pos) {
			return 0
		}
	}
}

// syntaxError describes malformed JSON at the current position.
func (l *lexer) syntaxError(format string, a ...any) error {
	if l.lerr != nil {
		return l.lerr
	}
	if l.rerr != nil {
		return fmt.Errorf("reading input: %v", l.rerr)
	}
	if l.peek() == 0 && l.eof {
		return &FormatError{"not OTLP JSON: the input ends in the middle of a value (truncated?)"}
	}
	return &FormatError{fmt.Sprintf("not OTLP JSON: invalid JSON at byte %d: %s", l.offset(), fmt.Sprintf(format, a...))}
}

// expect consumes the byte c (after whitespace).
func (l *lexer) expect(c byte) error {
	if got := l.peek(); got != c {
		return l.syntaxError("expected %q, found %s", c, l.describe())
	}
	l.pos++
	return nil
}

// describe names the next value for messages.
func (l *lexer) describe() string {
	switch c := l.peek(); {
	case c == 0:
		return "the end of the input"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	default:
		return strconv.QuoteRune(rune(c))
	}
}

// stringBytes reads a string (the next byte must be '"') and returns its
// content, unescaped. The slice points into the buffer and is valid only
// until the next call on the lexer, unless the string had escapes.
func (l *lexer) stringBytes() ([]byte, error) {
	if l.peek() != '"' {
		return nil, l.syntaxError("expected a string, found %s", l.describe())
	}
	l.pos++
	// Fast path: the closing quote is in the buffer and nothing before it
	// is a backslash or a control character. One pass over the bytes:
	// OTLP strings are short, and three vectorized scans (quote, backslash,
	// control) cost more than one plain one.
	rest := l.buf[l.pos:l.end]
	for q, c := range rest {
		if !plainStringByte[c] {
			// A string over the limit takes the slow path, which reports
			// its first fault in reading order (a control character before
			// the limit is reached, or the limit), whatever the buffer holds.
			if c == '"' && q <= l.maxToken {
				l.pos += q + 1
				return rest[:q], nil
			}
			break
		}
	}
	start, i, escaped := l.pos, l.pos, false
	for {
		for i < l.end {
			if i-start > l.maxToken {
				return nil, l.tokenTooLong(start)
			}
			c := l.buf[i]
			switch {
			case c == '"':
				raw := l.buf[start:i]
				l.pos = i + 1
				if escaped {
					return unescape(raw, l)
				}
				return raw, nil
			case c == '\\':
				escaped = true
				i += 2
			case c < 0x20:
				l.pos = i
				return nil, l.syntaxError("control character in a string")
			default:
				i++
			}
		}
		// The string's last byte in the buffer may be the one past the
		// limit: that comes before whatever the next read finds.
		if i-start > l.maxToken {
			return nil, l.tokenTooLong(start)
		}
		keep := start
		if !l.more(keep) {
			l.pos = l.end
			return nil, l.syntaxError("unterminated string")
		}
		start -= keep
		i -= keep
	}
}

// scalarBytes reads a number, true, false or null and returns its text.
// The slice is valid until the next call on the lexer.
func (l *lexer) scalarBytes() ([]byte, error) {
	l.peek()
	start, i := l.pos, l.pos
	for {
		for i < l.end {
			c := l.buf[i]
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '+' || c == '.' {
				i++
				continue
			}
			l.pos = i
			return l.checkScalar(start, i)
		}
		keep := start
		if !l.more(keep) {
			l.pos = l.end
			return l.checkScalar(start-keep, l.end)
		}
		start -= keep
		i -= keep
	}
}

func (l *lexer) checkScalar(start, end int) ([]byte, error) {
	if l.lerr != nil {
		return nil, l.lerr
	}
	if end-start > l.maxToken {
		return nil, l.tokenTooLong(start)
	}
	b := l.buf[start:end]
	switch string(b) {
	case "true", "false", "null":
		return b, nil
	case "":
		return nil, l.syntaxError("expected a value, found %s", l.describe())
	}
	if !validNumber(b) {
		return nil, l.syntaxError("%q is not a JSON value", string(b))
	}
	return b, nil
}

// validNumber checks the JSON number grammar.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if digits() == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// skip consumes one value of any shape.
func (l *lexer) skip() error {
	switch l.peek() {
	case '"':
		_, err := l.stringBytes()
		return err
	case '{', '[':
		depth := 0
		for {
			switch c := l.peek(); c {
			case '{', '[':
				depth++
				l.pos++
			case '}', ']':
				depth--
				l.pos++
				if depth == 0 {
					return nil
				}
			case ',', ':':
				l.pos++
			case '"':
				if _, err := l.stringBytes(); err != nil {
					return err
				}
			case 0:
				return l.syntaxError("unexpected end")
			default:
				if _, err := l.scalarBytes(); err != nil {
					return err
				}
			}
		}
	default:
		_, err := l.scalarBytes()
		return err
	}
}

// unescape decodes the escapes of a JSON string into a new slice.
func unescape(raw []byte, l *lexer) ([]byte, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(raw) {
			return nil, l.syntaxError("bad escape in a string")
		}
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n := decodeU(raw[i+1:])
			if n == 0 {
				return nil, l.syntaxError(`bad \u escape in a string`)
			}
			i += n
			if utf16.IsSurrogate(r) {
				r2, n2 := rune(-1), 0
				if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2, n2 = decodeU(raw[i+3:])
				}
				if d := utf16.DecodeRune(r, r2); n2 > 0 && d != utf8.RuneError {
					r = d
					i += 2 + n2
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, l.syntaxError("bad escape in a string")
		}
	}
	return out, nil
}

// decodeU reads the four hex digits of a \u escape; n is 0 when invalid.
func decodeU(b []byte) (r rune, n int) {
	if len(b) < 4 {
		return 0, 0
	}
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0
		}
	}
	return r, 4
}

// lexerBufSize is the initial buffer; tests shrink it to put token
// boundaries everywhere.
var lexerBufSize = 256 << 10

// plainStringByte tells the bytes a JSON string holds as they are: not the
// closing quote, a backslash or a control character.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
