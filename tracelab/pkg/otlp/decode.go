package otlp

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// This file holds the parser's JSON building blocks on top of the lexer:
// objects, arrays and typed scalars, with messages that name the field.

// object reads an object (or null), calling fn for each member key; fn
// must consume the value and must not keep key, which points into the
// lexer's buffer. It reports whether there was an object.
func (p *parser) object(fn func(key []byte) error) (bool, error) {
	if p.lx.peek() == 'n' {
		return false, p.null("an object")
	}
	if err := p.lx.expect('{'); err != nil {
		return false, err
	}
	for first := true; ; first = false {
		key, more, err := p.nextKey(first)
		if err != nil || !more {
			return true, err
		}
		if err := fn(key); err != nil {
			return true, err
		}
	}
}

// nextKey reads the separator and the key of the next member of an object
// whose '{' has been consumed. more is false after the closing '}'.
func (p *parser) nextKey(first bool) (key []byte, more bool, err error) {
	c := p.lx.peek()
	if c == '}' {
		p.lx.pos++
		return nil, false, nil
	}
	if !first {
		if c != ',' {
			return nil, false, p.lx.syntaxError("expected ',' or '}' after an object member, found %s", p.lx.describe())
		}
		p.lx.pos++
	}
	if p.lx.peek() != '"' {
		return nil, false, p.lx.syntaxError("expected an object key, found %s", p.lx.describe())
	}
	key, err = p.lx.stringBytes()
	if err != nil {
		return nil, false, err
	}
	if l := p.lx; l.pos < l.end && l.buf[l.pos] == ':' { // compact JSON: no refill, no copy
		l.pos++
		return key, true, nil
	}
	// Reading the ':' may refill the buffer under key: keep a copy. The copy
	// is reused by the next key, which is why callers must not keep it.
	p.key = append(p.key[:0], key...)
	if err := p.lx.expect(':'); err != nil {
		return nil, false, err
	}
	return p.key, true, nil
}

// array reads an array (or null), calling elem for each element; elem
// must consume it. what names the array in messages.
func (p *parser) array(what string, elem func() error) error {
	switch p.lx.peek() {
	case 'n':
		return p.null(what)
	case '[':
		p.lx.pos++
	default:
		return &FormatError{fmt.Sprintf("not OTLP JSON: near byte %d: %q should be an array, found %s", p.lx.offset(), what, p.lx.describe())}
	}
	for first := true; ; first = false {
		c := p.lx.peek()
		if c == ']' {
			p.lx.pos++
			return nil
		}
		if !first {
			if c != ',' {
				return p.lx.syntaxError("expected ',' or ']' in an array, found %s", p.lx.describe())
			}
			p.lx.pos++
		}
		if err := elem(); err != nil {
			return err
		}
	}
}

// null consumes a null where what was expected (null is accepted as
// "absent" wherever OTLP has an object or array).
func (p *parser) null(what string) error {
	b, err := p.lx.scalarBytes()
	if err != nil {
		return err
	}
	if string(b) != "null" {
		return &FormatError{fmt.Sprintf("not OTLP JSON: near byte %d: expected %s, found %q", p.lx.offset(), what, b)}
	}
	return nil
}

// str reads a string value (null reads as "").
func (p *parser) str(what string) (string, error) {
	if p.lx.peek() == 'n' {
		return "", p.null(what)
	}
	b, err := p.lx.stringBytes()
	if err != nil {
		return "", p.typeError(what, err)
	}
	return string(b), nil
}

// internedString reads a string value and returns the shared copy.
func (p *parser) internedString(what string) (string, error) {
	if p.lx.peek() == 'n' {
		return "", p.null(what)
	}
	b, err := p.lx.stringBytes()
	if err != nil {
		return "", p.typeError(what, err)
	}
	return p.intern(b), nil
}

// id reads a trace or span id; see normalizeID.
func (p *parser) id(what string, intern bool) (string, error) {
	if p.lx.peek() == 'n' {
		return "", p.null(what)
	}
	b, err := p.lx.stringBytes()
	if err != nil {
		return "", p.typeError(what, err)
	}
	// Trace ids are shared by their spans through the recent table alone:
	// kept in the intern table, every trace of a long input stayed in
	// memory by its id to the end.
	if intern && isLowerHex(b) && !allZero(b) {
		return p.internRecent(b), nil
	}
	id := normalizeID(string(b))
	if intern {
		return p.internRecent([]byte(id)), nil
	}
	return id, nil
}

// internRecent is intern without the table: the copy of b the recent
// table holds, else a new one, which the table then holds.
func (p *parser) internRecent(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	slot := p.recentSlot(b)
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}

// recentSlot is b's place in the recent table.
func (p *parser) recentSlot(b []byte) *string {
	n := len(b)
	return &p.recent[(uint(n)*131+uint(b[0])*31+uint(b[n/2])*7+uint(b[n-1]))%uint(len(p.recent))]
}

// scalar reads a number or literal, or the content of a string holding
// one: OTLP/JSON writes 64-bit integers as strings, many producers don't.
func (p *parser) scalar(what string) ([]byte, error) {
	if p.lx.peek() == '"' {
		b, err := p.lx.stringBytes()
		return bytes.TrimSpace(b), err
	}
	if c := p.lx.peek(); c == '{' || c == '[' {
		return nil, p.valueError("%s is %s, expected a number", what, p.lx.describe())
	}
	return p.lx.scalarBytes()
}

// integer reads an integer written as a number or a string; 1.7e18 is
// accepted too.
func (p *parser) integer(what string) (int64, error) {
	b, err := p.scalar(what)
	if err != nil || string(b) == "null" || len(b) == 0 {
		return 0, err
	}
	if n, ok := shortDecimal(b); ok { // every timestamp: skip strconv's generality
		return int64(n), nil // past MaxInt64 it wraps, as ParseUint's below
	}
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return n, nil
	}
	if n, err := strconv.ParseUint(string(b), 10, 64); err == nil {
		return int64(n), nil
	}
	if x, err := strconv.ParseFloat(string(b), 64); err == nil && x >= -9.3e18 && x <= 9.3e18 {
		return int64(x), nil
	}
	return 0, p.valueError("%s %q is not an integer", what, b)
}

// shortDecimal reads b when it is 1 to 19 decimal digits, which fit a
// uint64 (timestamps in nanoseconds have 19).
func shortDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// enum reads an enum as a number (3), a numeric string ("3") or a name.
func (p *parser) enum(what string, byName func(string) (int64, bool)) (int64, error) {
	quoted := p.lx.peek() == '"'
	b, err := p.scalar(what)
	if err != nil || string(b) == "null" {
		return 0, err
	}
	if n, ok := shortDecimal(b); ok && n <= math.MaxInt64 {
		return int64(n), nil
	}
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return n, nil
	}
	if quoted {
		if n, ok := byName(string(b)); ok {
			return n, nil
		}
	}
	return 0, p.valueError("unknown %s %q", what, b)
}

func (p *parser) intern(b []byte) string {
	// Most strings interned are what the span before had in the same
	// place (its attribute keys, its trace id, its method): a small table
	// indexed by a few of their bytes finds them without hashing them all.
	var slot *string
	if len(b) > 0 {
		slot = p.recentSlot(b)
		if *slot == string(b) {
			return *slot
		}
	}
	v, ok := p.strs[string(b)]
	if !ok {
		v = string(b)
		if len(p.strs) < maxInterned {
			p.strs[v] = v
		}
	}
	if slot != nil {
		*slot = v
	}
	return v
}

// maxInterned bounds the intern table so that a file full of unique
// values cannot grow it without limit.
const maxInterned = 1 << 20

func (p *parser) valueError(format string, a ...any) error {
	return &FormatError{fmt.Sprintf("not OTLP JSON: near byte %d: %s", p.lx.offset(), fmt.Sprintf(format, a...))}
}

// typeError turns "expected a string" from the lexer into a message that
// names the field.
func (p *parser) typeError(what string, err error) error {
	if c := p.lx.peek(); c != '"' && c != 0 {
		return p.valueError("%s is %s, expected a string", what, p.lx.describe())
	}
	return err
}
