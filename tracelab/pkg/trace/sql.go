package trace

import "strings"

// NormalizeSQL turns a statement into its shape, so the same query with
// different values fingerprints the same:
//
//   - string literals ('it”s') and numbers (17, -2.5, 1e3, 0x1F) become ?
//   - bind placeholders of every driver become ? (see placeholderEnd)
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
		case commentEnd(q, i) > i:
			i = commentEnd(q, i)
			space = true
		case c == '\'':
			i = skipQuoted(q, i, '\'')
			emit('?')
		case c == '"' || c == '`':
			j := skipQuoted(q, i, c)
			emit([]byte(q[i:j])...)
			i = j
		case placeholderEnd(q, i) > i:
			i = placeholderEnd(q, i)
			emit('?')
		case c == ':' && i+1 < len(q) && q[i+1] == ':', c == '@' && i+1 < len(q) && q[i+1] == '@':
			emit(c, c) // a PostgreSQL cast (::int) or a SQL Server system function (@@ROWCOUNT)
			i += 2
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

// placeholderEnd returns where the bind placeholder that starts at q[i]
// ends, or i when none starts there. The forms, by who sends them:
//
//   - ? (and SQLite's ?NNN): JDBC, so the Java agent, which also puts ? where
//     its sanitizer removed a literal; Python's sqlite3 (paramstyle qmark);
//     Node's mysql2 and knex before its PostgreSQL dialect rewrites them;
//   - $1: PostgreSQL's wire protocol, so node-postgres (pg), pgx and lib/pq
//     under Go's otelsql, asyncpg;
//   - %s and %(name)s: Python's format and pyformat paramstyles (PEP 249),
//     the text psycopg2, psycopg, PyMySQL and mysqlclient receive, and so
//     what the OpenTelemetry Python dbapi instrumentation records as
//     db.statement; Django's PostgreSQL and MySQL backends send %s;
//   - :name and :1: PEP 249's named and numeric paramstyles (python-oracledb,
//     sqlite3 named, SQLAlchemy's text()), and Oracle's JDBC and ODP.NET;
//   - @p1 and @name: SQL Server, whose ADO.NET SqlClient (recorded as is by
//     OpenTelemetry .NET's SqlClient instrumentation; EF Core names them
//     @__id_0 or @p0) and go-mssqldb take named parameters.
//
// Not placeholders: :: (a PostgreSQL cast), @@ (a SQL Server system
// function), and anything inside a quoted literal or identifier, which the
// callers skip. MySQL's user variables (@total) read as placeholders: a
// statement that carries one says nothing about its values either.
func placeholderEnd(q string, i int) int {
	n := len(q)
	next := func(k int) byte {
		if k < n {
			return q[k]
		}
		return 0
	}
	identFrom := func(k int) int {
		for k < n && isIdentByte(q[k]) && q[k] != '$' {
			k++
		}
		return k
	}
	digitsFrom := func(k int) int {
		for k < n && isDigit(q[k]) {
			k++
		}
		return k
	}
	switch q[i] {
	case '?':
		return digitsFrom(i + 1)
	case '$':
		if isDigit(next(i + 1)) {
			return digitsFrom(i + 1)
		}
	case '%':
		if next(i+1) == 's' {
			return i + 2
		}
		if next(i+1) == '(' {
			if j := strings.IndexByte(q[i:], ')'); j > 2 && next(i+j+1) == 's' {
				return i + j + 2
			}
		}
	case ':':
		if i > 0 && (q[i-1] == ':' || isIdentByte(q[i-1])) || next(i+1) == ':' {
			return i // a cast, or part of a word such as a time zone name
		}
		if c := next(i + 1); isDigit(c) {
			return digitsFrom(i + 1)
		} else if isIdentStart(c) {
			return identFrom(i + 1)
		}
	case '@':
		if i > 0 && q[i-1] == '@' || next(i+1) == '@' {
			return i
		}
		if isIdentStart(next(i + 1)) {
			return identFrom(i + 1)
		}
	}
	return i
}

// HasPlaceholder reports whether a statement takes bind parameters: a
// placeholder (placeholderEnd) outside quotes and comments. A statement
// without one carries its values in its text, as drivers and ORMs that do
// not bind parameters send it.
func HasPlaceholder(q string) bool {
	for i := 0; i < len(q); {
		switch c := q[i]; {
		case c == '\'', c == '"', c == '`':
			i = skipQuoted(q, i, c)
		case commentEnd(q, i) > i:
			i = commentEnd(q, i)
		case placeholderEnd(q, i) > i:
			return true
		default:
			i++
		}
	}
	return false
}

// WithoutSQLComments is the statement with its comments removed and the
// rest, literals included, as written.
func WithoutSQLComments(q string) string {
	if !strings.Contains(q, "--") && !strings.Contains(q, "/*") {
		return q
	}
	var b strings.Builder
	for i := 0; i < len(q); {
		switch c := q[i]; {
		case c == '\'', c == '"', c == '`':
			j := skipQuoted(q, i, c)
			b.WriteString(q[i:j])
			i = j
		case commentEnd(q, i) > i:
			i = commentEnd(q, i)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return strings.TrimSpace(b.String())
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

// commentEnd returns where the comment that starts at q[i] (-- to the end
// of the line, or /* */) ends, or i when none starts there.
func commentEnd(q string, i int) int {
	switch {
	case strings.HasPrefix(q[i:], "--"):
		if end := strings.IndexByte(q[i:], '\n'); end >= 0 {
			return i + end
		}
		return len(q)
	case strings.HasPrefix(q[i:], "/*"):
		if end := strings.Index(q[i+2:], "*/"); end >= 0 {
			return i + 2 + end + 2
		}
		return len(q)
	}
	return i
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

func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}
