package trace

import "strings"

// NormalizeSQL turns a statement into its shape, so the same query with
// different values fingerprints the same:
//
//   - string literals ('it”s') and numbers (17, -2.5, 1e3, 0x1F) become ?
//   - positional placeholders ($1, %s) become ?; ? and :name stay
//   - comments (-- ..., /* ... */, e.g. sqlcommenter tags) are removed
//   - runs of whitespace become one space; a trailing ; is dropped
//   - IN lists of placeholders collapse: IN (?, ?, ?) -> IN (?)
//
// Identifiers are kept as written, including quoted ones ("books_author"),
// and keywords keep their case: the result should read like the query.
func NormalizeSQL(q string) string {
	b := make([]byte, 0, len(q))
	space := false // a space is pending
	emit := func(s ...byte) {
		if space && len(b) > 0 {
			b = append(b, ' ')
		}
		space = false
		b = append(b, s...)
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			space = true
			i++
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			for i < len(q) && q[i] != '\n' {
				i++
			}
			space = true
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			if end := strings.Index(q[i+2:], "*/"); end >= 0 {
				i += 2 + end + 2
			} else {
				i = len(q)
			}
			space = true
		case c == '\'':
			i = skipQuoted(q, i, '\'')
			emit('?')
		case c == '"' || c == '`':
			j := skipQuoted(q, i, c)
			emit([]byte(q[i:j])...)
			i = j
		case c == '$' && i+1 < len(q) && isDigit(q[i+1]):
			i++
			for i < len(q) && isDigit(q[i]) {
				i++
			}
			emit('?')
		case c == '%' && i+1 < len(q) && q[i+1] == 's':
			i += 2
			emit('?')
		case isDigit(c) || c == '.' && i+1 < len(q) && isDigit(q[i+1]):
			if len(b) > 0 && !space && isIdentByte(b[len(b)-1]) {
				// part of an identifier such as t1 or col2
				j := i
				for j < len(q) && isIdentByte(q[j]) {
					j++
				}
				emit([]byte(q[i:j])...)
				i = j
				continue
			}
			i = skipNumber(q, i)
			emit('?')
		case isIdentByte(c):
			j := i
			for j < len(q) && isIdentByte(q[j]) {
				j++
			}
			emit([]byte(q[i:j])...)
			i = j
		default:
			// Punctuation: no space before , ) or after (, so that the
			// IN-list collapse below sees one canonical spelling.
			if c == ',' || c == ')' {
				space = false
			}
			emit(c)
			if c == '(' {
				for i+1 < len(q) && isSpace(q[i+1]) {
					i++
				}
			}
			if c == ',' {
				space = true
			}
			i++
		}
	}
	s := strings.TrimSuffix(strings.TrimSpace(string(b)), ";")
	return collapseInLists(strings.TrimSpace(s))
}

// collapseInLists rewrites "IN (?, ?, ?)" (any case, with or without the
// space before the parenthesis) to "IN (?)".
func collapseInLists(s string) string {
	if !strings.Contains(s, "?, ?") {
		return s
	}
	var b strings.Builder
	for {
		i := indexFoldIn(s)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		// s[i:] starts with "IN" + optional space + "(?"
		j := i + 2
		if j < len(s) && s[j] == ' ' {
			j++
		}
		k := j + 2 // just after "(?"
		for strings.HasPrefix(s[k:], ", ?") {
			k += 3
		}
		if k < len(s) && s[k] == ')' {
			b.WriteString(s[:i])
			b.WriteString(s[i : i+2]) // keep the keyword's case
			b.WriteString(" (?)")
			s = s[k+1:]
			continue
		}
		b.WriteString(s[:j+2])
		s = s[j+2:]
	}
}

// indexFoldIn finds the next " IN (?" / " in(?" that starts a placeholder
// list, returning the index of the keyword.
func indexFoldIn(s string) int {
	for i := 0; i+4 <= len(s); i++ {
		if s[i] != 'I' && s[i] != 'i' || s[i+1] != 'N' && s[i+1] != 'n' {
			continue
		}
		if i > 0 && isIdentByte(s[i-1]) {
			continue
		}
		j := i + 2
		if j < len(s) && s[j] == ' ' {
			j++
		}
		if strings.HasPrefix(s[j:], "(?") {
			return i
		}
	}
	return -1
}

func skipQuoted(q string, i int, quote byte) int {
	i++
	for i < len(q) {
		switch q[i] {
		case '\\':
			i += 2
			continue
		case quote:
			if i+1 < len(q) && q[i+1] == quote { // doubled quote escapes itself
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(q)
}

func skipNumber(q string, i int) int {
	if q[i] == '0' && i+1 < len(q) && (q[i+1] == 'x' || q[i+1] == 'X') {
		i += 2
		for i < len(q) && (isDigit(q[i]) || q[i] >= 'a' && q[i] <= 'f' || q[i] >= 'A' && q[i] <= 'F') {
			i++
		}
		return i
	}
	for i < len(q) && (isDigit(q[i]) || q[i] == '.') {
		i++
	}
	if i < len(q) && (q[i] == 'e' || q[i] == 'E') {
		j := i + 1
		if j < len(q) && (q[j] == '+' || q[j] == '-') {
			j++
		}
		if j < len(q) && isDigit(q[j]) {
			for j < len(q) && isDigit(q[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}
