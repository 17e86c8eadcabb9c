package trace

import (
	"sort"
	"strings"
	"sync"
)

// Fingerprint identifies what a span does, independent of the values it
// did it with: "<service> <operation>", e.g.
//
//	catalog GET 127.0.0.1:18081/prices/{id}
//	catalog GET /catalog/summary
//	books postgresql SELECT "books_author"."id" FROM "books_author" WHERE "books_author"."id" = ?
//	redis-manual GetDriver
//
// OpenTelemetry has no such field (span names are too coarse: the Java
// agent names every HTTP client span just "GET"), and Sentry likewise
// computes its own span hash. The result depends only on the span's
// service, name, kind and attributes, so it is stable across runs.
func Fingerprint(s *Span) string {
	op := Operation(s)
	if s.Service == "" {
		return op
	}
	return s.Service + " " + op
}

// Operation is the fingerprint without the service. The first rule that
// applies wins:
//
//  1. Database or cache (db.system / db.system.name set):
//     - redis, memcached, valkey: "<system> <COMMAND>", the command being the
//     first word of db.query.text / db.statement (or db.operation.name);
//     keys are never part of it.
//     - SQL and others: "<system> <normalized statement>" (see NormalizeSQL);
//     without a statement "<system> <operation> <collection>" or the name.
//  2. RPC (rpc.service or rpc.method set): "<rpc.service>/<rpc.method>".
//  3. HTTP (a method or URL attribute set):
//     - server: "<METHOD> <route>", the route from http.route, url.template,
//     else the path of url.path / http.target with ids parameterized.
//     - client: "<METHOD> <host:port><path>", the path from url.template,
//     http.route, else url.full / http.url / url.path / http.target with ids
//     parameterized; query parameter names are kept, sorted, values dropped.
//  4. Messaging (messaging.system set): "<system> <operation> <destination>".
//  5. Otherwise the span name with id-looking tokens parameterized.
func Operation(s *Span) string {
	if sys := s.Attr("db.system.name", "db.system"); sys != "" {
		return dbOperation(s, sys)
	}
	if svc, m := s.Attr("rpc.service"), s.Attr("rpc.method"); svc != "" || m != "" {
		if svc == "" {
			return m
		}
		if m == "" {
			return svc
		}
		return svc + "/" + m
	}
	if op, ok := httpOperation(s); ok {
		return op
	}
	if sys := s.Attr("messaging.system"); sys != "" {
		parts := []string{sys}
		if op := s.Attr("messaging.operation.type", "messaging.operation.name", "messaging.operation"); op != "" {
			parts = append(parts, op)
		}
		if d := s.Attr("messaging.destination.template", "messaging.destination.name", "messaging.destination"); d != "" {
			parts = append(parts, ParameterizeName(d))
		}
		if len(parts) > 1 {
			return strings.Join(parts, " ")
		}
	}
	return ParameterizeName(s.Name)
}

// cacheSystems are key-value stores whose statements carry keys, not
// queries: only the command says what was done.
var cacheSystems = map[string]bool{"redis": true, "memcached": true, "valkey": true}

func dbOperation(s *Span, system string) string {
	stmt := s.Attr("db.query.text", "db.statement")
	if cacheSystems[strings.ToLower(system)] {
		cmd := firstWord(stmt)
		if cmd == "" {
			cmd = firstWord(s.Attr("db.operation.name", "db.operation"))
		}
		if cmd == "" {
			cmd = firstWord(s.Name)
		}
		return system + " " + strings.ToUpper(cmd)
	}
	if stmt != "" {
		return sqlOps.get(system, stmt)
	}
	parts := []string{system}
	if op := s.Attr("db.operation.name", "db.operation"); op != "" {
		parts = append(parts, op)
	}
	if c := s.Attr("db.collection.name", "db.sql.table", "db.mongodb.collection"); c != "" {
		parts = append(parts, c)
	}
	if len(parts) == 1 {
		parts = append(parts, ParameterizeName(s.Name))
	}
	return strings.Join(parts, " ")
}

func firstWord(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t\n"); i >= 0 {
		return s[:i]
	}
	return s
}

var httpMethods = map[string]bool{
	"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true,
	"CONNECT": true, "OPTIONS": true, "TRACE": true, "PATCH": true, "QUERY": true,
}

// httpOperation builds the HTTP form, or reports false when the span has
// no HTTP attributes at all.
func httpOperation(s *Span) (string, bool) {
	method := s.Attr("http.request.method", "http.method")
	if method == "_OTHER" {
		method = s.Attr("http.request.method_original")
	}
	full := s.Attr("url.full", "http.url")
	target := s.Attr("url.path", "http.target")
	route := s.Attr("http.route")
	template := s.Attr("url.template")
	if method == "" && full == "" && target == "" && route == "" && template == "" {
		return "", false
	}
	if method == "" {
		// Old instrumentations name the span "HTTP GET" and set only a URL.
		if w := strings.ToUpper(strings.TrimPrefix(s.Name, "HTTP ")); httpMethods[w] {
			method = w
		} else {
			method = "HTTP"
		}
	}
	method = strings.ToUpper(method)

	var host, path, query string
	if full != "" {
		host, path, query = splitURL(full)
	} else if target != "" {
		path, query, _ = strings.Cut(target, "?")
	}
	if s.Kind != KindServer && host == "" {
		host = s.Attr("server.address", "net.peer.name")
		if host != "" {
			if port := s.Attr("server.port", "net.peer.port"); port != "" {
				host += ":" + port
			}
		}
	}

	var p string
	switch {
	case s.Kind == KindServer && route != "":
		p = route
	case template != "":
		p = template
	case route != "":
		p = route
	default:
		p = ParameterizePath(path)
		if keys := queryKeys(query); keys != "" {
			p += "?" + keys
		}
	}
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if s.Kind == KindServer || host == "" {
		if p == "" {
			p = "/"
		}
		return method + " " + p, true
	}
	return method + " " + host + p, true
}

// splitURL returns host (with port when one was given), path and raw query
// of an absolute or relative URL. It is a plain scan rather than
// url.Parse: it runs for every HTTP client span, tolerates values url.Parse
// rejects, and keeps the path as sent (escaped).
func splitURL(raw string) (host, path, query string) {
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
		j := strings.IndexAny(rest, "/?#")
		if j < 0 {
			j = len(rest)
		}
		host, rest = rest[:j], rest[j:]
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:] // drop user:password@
		}
	}
	rest, _, _ = strings.Cut(rest, "#")
	path, query, _ = strings.Cut(rest, "?")
	return host, path, query
}

// queryKeys keeps the parameter names of a query string, sorted and
// de-duplicated, joined with &: "pickup=1,2&dropoff=3,4" -> "dropoff&pickup".
func queryKeys(q string) string {
	if q == "" {
		return ""
	}
	var keys []string
	seen := map[string]bool{}
	for _, kv := range strings.Split(q, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, "&")
}

// sqlOps keeps the operations of the statements met: an application sends
// the same few statements again and again, and normalizing each anew was
// an eighth of the CPU of analyzing a million real spans.
var sqlOps = sqlOpCache{m: map[sqlStmt]string{}}

// sqlOpCacheBytes bounds the statements sqlOps holds: past it, statements
// not yet met are normalized every time (those that differ by inlined
// values fill it first; they would never be met again anyway).
const sqlOpCacheBytes = 8 << 20

type sqlStmt struct{ system, stmt string }

type sqlOpCache struct {
	mu    sync.Mutex
	m     map[sqlStmt]string
	bytes int
}

// get returns system + " " + NormalizeSQL(stmt). Safe for concurrent use.
func (c *sqlOpCache) get(system, stmt string) string {
	k := sqlStmt{system, stmt}
	c.mu.Lock()
	op, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return op
	}
	op = system + " " + NormalizeSQL(stmt)
	c.mu.Lock()
	if n := len(system) + len(stmt) + len(op); c.bytes+n <= sqlOpCacheBytes {
		// Copies: the span's strings are cut from one string of the span
		// (the parser's), which a key would keep alive.
		c.m[sqlStmt{strings.Clone(system), strings.Clone(stmt)}] = op
		c.bytes += n
	}
	c.mu.Unlock()
	return op
}
