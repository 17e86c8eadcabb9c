package trace

import "strings"

// IDPlaceholder replaces id-looking parts of paths and names.
const IDPlaceholder = "{id}"

// LooksLikeID reports whether one path segment or name token is an
// identifier rather than a fixed word, so that /prices/17 and /prices/18
// fingerprint the same. The rules, in order:
//
//   - all digits: 17, 20240105
//   - a UUID: 0b7e4ad2-1c3f-4b0e-9d55-6a3c3f8e2d10
//   - hex of 12+ characters with at least one digit: object ids, hashes
//   - 16+ characters of [A-Za-z0-9_-] mixing letters and digits: tokens,
//     ULIDs, base64url ids
//   - 4+ characters of which at least half are digits: T712345C, 2024-01-05
//
// Short words with a digit (v1, http2, ipv4, s3) stay as they are.
func LooksLikeID(seg string) bool {
	n := len(seg)
	if n == 0 {
		return false
	}
	digits, letters, hex, other := 0, 0, 0, 0
	for i := 0; i < n; i++ {
		c := seg[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
			hex++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			letters++
			hex++
		case c >= 'g' && c <= 'z' || c >= 'G' && c <= 'Z':
			letters++
		case c == '-' || c == '_':
		default:
			other++
		}
	}
	switch {
	case digits == n:
		return true
	case isUUID(seg):
		return true
	case hex == n && n >= 12 && digits > 0:
		return true
	case other == 0 && n >= 16 && digits > 0 && letters > 0:
		return true
	case n >= 4 && digits*2 >= n:
		return true
	}
	return false
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// ParameterizePath replaces id-looking segments of a URL path with {id}:
// /prices/17 -> /prices/{id}. Segments that are already templates
// ({itemId}, :itemId) are kept.
func ParameterizePath(path string) string {
	if !strings.ContainsAny(path, "0123456789") {
		return path // nothing can look like an id; the common case
	}
	// One pass, segment by segment; the copy starts at the first id, and
	// a path with none is returned as it is (every span has a path, and
	// splitting and joining each took a tenth of a million-span analysis).
	var b []byte
	start := 0
	for i := 0; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		if seg := path[start:i]; LooksLikeID(seg) {
			if b == nil {
				b = append(make([]byte, 0, len(path)+len(IDPlaceholder)), path[:start]...)
			}
			b = append(b, IDPlaceholder...)
		} else if b != nil {
			b = append(b, seg...)
		}
		if b != nil && i < len(path) {
			b = append(b, '/')
		}
		start = i + 1
	}
	if b == nil {
		return path
	}
	return string(b)
}

// ParameterizeName replaces id-looking tokens of a free-form span name,
// splitting on spaces, slashes and common punctuation: "process order
// 12345" -> "process order {id}".
func ParameterizeName(name string) string {
	if !strings.ContainsAny(name, "0123456789") {
		return name
	}
	var b strings.Builder
	tok := 0
	flush := func(end int) {
		if t := name[tok:end]; LooksLikeID(t) {
			b.WriteString(IDPlaceholder)
		} else {
			b.WriteString(t)
		}
	}
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case ' ', '/', ':', '=', ',', '?', '&', '#', '(', ')', '[', ']':
			flush(i)
			b.WriteByte(name[i])
			tok = i + 1
		}
	}
	flush(len(name))
	return b.String()
}
