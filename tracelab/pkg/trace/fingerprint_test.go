package trace

import (
	"fmt"
	"strings"
	"testing"
)

func TestFingerprint(t *testing.T) {
	cases := []struct {
		name    string
		service string
		span    string
		kind    Kind
		attrs   map[string]string
		want    string
	}{
		// HTTP clients: the OpenTelemetry Java agent 2.x names them just "GET".
		{"agent 2.x client, numeric id", "catalog", "GET", KindClient,
			map[string]string{"http.request.method": "GET", "url.full": "http://127.0.0.1:18081/prices/1234", "server.address": "127.0.0.1", "server.port": "18081"},
			"catalog GET 127.0.0.1:18081/prices/{id}"},
		{"uuid and hex ids, query values dropped", "web", "GET", KindClient,
			map[string]string{"http.request.method": "GET", "url.full": "https://api.example.com/orders/0b7e4ad2-1c3f-4b0e-9d55-6a3c3f8e2d10/items/5f1d7a3c9e2b4a6d?page=2&expand=all&page=3"},
			"web GET api.example.com/orders/{id}/items/{id}?expand&page"},
		{"url.template preferred", "web", "GET", KindClient,
			map[string]string{"http.request.method": "GET", "url.full": "http://users:8080/users/42", "url.template": "/users/{userId}"},
			"web GET users:8080/users/{userId}"},
		{"old semconv client, host from net.peer.*", "frontend", "HTTP GET", KindClient,
			map[string]string{"http.method": "GET", "http.target": "/route?dropoff=1,2&pickup=3,4", "net.peer.name": "route", "net.peer.port": "8083"},
			"frontend GET route:8083/route?dropoff&pickup"},
		{"method from an old span name", "frontend", "HTTP POST", KindClient,
			map[string]string{"http.url": "http://x/api/v1/things"},
			"frontend POST x/api/v1/things"},
		{"_OTHER method", "web", "HTTP", KindClient,
			map[string]string{"http.request.method": "_OTHER", "http.request.method_original": "PURGE", "url.full": "http://cache/a/77"},
			"web PURGE cache/a/{id}"},
		{"short words with digits are kept", "web", "GET", KindClient,
			map[string]string{"http.request.method": "GET", "url.full": "http://s3/v2/ipv4/T712345C/2024-01-05"},
			"web GET s3/v2/ipv4/{id}/{id}"},
		// HTTP servers: the route, no host.
		{"server with route", "catalog", "GET /catalog/summary", KindServer,
			map[string]string{"http.request.method": "GET", "http.route": "/catalog/summary", "url.path": "/catalog/summary"},
			"catalog GET /catalog/summary"},
		{"server without route", "pricing", "GET", KindServer,
			map[string]string{"http.request.method": "GET", "url.path": "/prices/17"},
			"pricing GET /prices/{id}"},
		{"django route without leading slash", "books", "GET books/", KindServer,
			map[string]string{"http.method": "GET", "http.route": "books/"},
			"books GET /books/"},
		// Databases and caches.
		{"sql literals", "books", "SELECT", KindClient,
			map[string]string{"db.system": "postgresql", "db.statement": "SELECT * FROM author WHERE id = 17 AND name = 'O''Brien'"},
			"books postgresql SELECT * FROM author WHERE id = ? AND name = ?"},
		{"sql IN list and whitespace", "books", "SELECT", KindClient,
			map[string]string{"db.system.name": "mysql", "db.query.text": "SELECT *\n  FROM   book\n WHERE id IN (1, 2,3)"},
			"books mysql SELECT * FROM book WHERE id IN (?)"},
		{"redis command, no key", "cart", "GET", KindClient,
			map[string]string{"db.system": "redis", "db.statement": "GET cart:8f2a"},
			"cart redis GET"},
		{"redis from operation name", "cart", "HMSET", KindClient,
			map[string]string{"db.system.name": "redis", "db.operation.name": "hmset"},
			"cart redis HMSET"},
		{"mongo without statement", "users", "find", KindClient,
			map[string]string{"db.system": "mongodb", "db.operation": "find", "db.mongodb.collection": "users"},
			"users mongodb find users"},
		// RPC, messaging and the fallback.
		{"grpc", "frontend", "/driver.DriverService/FindNearest", KindClient,
			map[string]string{"rpc.system": "grpc", "rpc.service": "driver.DriverService", "rpc.method": "FindNearest"},
			"frontend driver.DriverService/FindNearest"},
		{"kafka producer", "orders", "orders publish", KindProducer,
			map[string]string{"messaging.system": "kafka", "messaging.operation": "publish", "messaging.destination.name": "orders"},
			"orders kafka publish orders"},
		{"plain name", "redis-manual", "GetDriver", KindClient, map[string]string{}, "redis-manual GetDriver"},
		{"name with an id", "worker", "process order 123456", KindInternal, map[string]string{}, "worker process order {id}"},
		{"no service", "", "GetDriver", KindClient, map[string]string{}, "GetDriver"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Span{Service: c.service, Name: c.span, Kind: c.kind, Attrs: AttrsOf(c.attrs)}
			got := Fingerprint(s)
			if got != c.want {
				t.Errorf("Fingerprint = %q\n           want %q", got, c.want)
			}
			if again := Fingerprint(s); again != got {
				t.Errorf("not deterministic: %q then %q", got, again)
			}
		})
	}
}

func TestSameCallDifferentIDsShareAFingerprint(t *testing.T) {
	mk := func(u string) *Span {
		return &Span{Service: "catalog", Name: "GET", Kind: KindClient, Attrs: AttrsOf(map[string]string{"http.request.method": "GET", "url.full": u})}
	}
	a, b := Fingerprint(mk("http://h:1/prices/1")), Fingerprint(mk("http://h:1/prices/1599"))
	if a != b {
		t.Errorf("%q != %q", a, b)
	}
	if c := Fingerprint(mk("http://h:1/items")); c == a {
		t.Errorf("/items and /prices/{id} share %q", c)
	}
}

func TestNormalizeSQL(t *testing.T) {
	cases := map[string]string{
		`SELECT "books_author"."id" FROM "books_author" WHERE "books_author"."id" = 17 LIMIT 21`: `SELECT "books_author"."id" FROM "books_author" WHERE "books_author"."id" = ? LIMIT ?`,
		`select * from t where a in ( 'x' , 'y', 'z' ) and b IN(1,2)`:                            `select * from t where a in (?) and b IN (?)`,
		`SELECT * FROM t WHERE id = $1 AND v > %s`:                                               `SELECT * FROM t WHERE id = ? AND v > ?`,
		`SELECT t1.col2 FROM t1 WHERE x = 1.5e3 OR y = 0x1F OR z = .5`:                           `SELECT t1.col2 FROM t1 WHERE x = ? OR y = ? OR z = ?`,
		"SELECT 1 -- trailing comment\n FROM dual;":                                              `SELECT ? FROM dual`,
		`/* traceparent='00-abc' */ UPDATE t SET s = 'it''s' WHERE id = 3`:                       `UPDATE t SET s = ? WHERE id = ?`,
		`SELECT * FROM t WHERE a IN (?)`:                                                         `SELECT * FROM t WHERE a IN (?)`,
		`SELECT * FROM t WHERE a IN (SELECT b FROM u WHERE c = 1)`:                               `SELECT * FROM t WHERE a IN (SELECT b FROM u WHERE c = ?)`,
		`INSERT INTO t (a, b) VALUES (1, 'two')`:                                                 `INSERT INTO t (a, b) VALUES (?, ?)`,
		"SELECT `order`.id FROM `order` WHERE note = 'a\\'b'":                                    "SELECT `order`.id FROM `order` WHERE note = ?",
		`SELECT * FROM t WHERE a = %(id)s AND b = :name AND c = :1 AND d = @p1 AND e = @name`:    `SELECT * FROM t WHERE a = ? AND b = ? AND c = ? AND d = ? AND e = ?`,
		`SELECT x::int, @@ROWCOUNT FROM t WHERE y = ?2`:                                          `SELECT x::int, @@ROWCOUNT FROM t WHERE y = ?`,
	}
	for in, want := range cases {
		if got := NormalizeSQL(in); got != want {
			t.Errorf("NormalizeSQL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestHasPlaceholder(t *testing.T) {
	for q, want := range map[string]bool{
		`SELECT * FROM t WHERE id = ?`:                 true,
		`SELECT * FROM t WHERE id = $1`:                true,
		`SELECT * FROM t WHERE id = %s`:                true,
		`SELECT * FROM t WHERE id = %(author_id)s`:     true,
		`SELECT * FROM t WHERE id = :id`:               true,
		`SELECT * FROM t WHERE id = :1`:                true,
		`SELECT * FROM t WHERE id = @p1`:               true,
		`SELECT * FROM t WHERE id = @__id_0`:           true,
		`SELECT * FROM t WHERE id = 17`:                false,
		`SELECT id::text, @@ROWCOUNT FROM t`:           false,
		`SELECT * FROM t WHERE s = 'why? :x @y %s $1'`: false,
		"SELECT 1 -- $1 ?\nFROM t /* :x */":            false,
		`SELECT "a?b" FROM t WHERE ts > '10:30'`:       false,
	} {
		if got := HasPlaceholder(q); got != want {
			t.Errorf("HasPlaceholder(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestLooksLikeID(t *testing.T) {
	for _, s := range []string{"17", "0b7e4ad2-1c3f-4b0e-9d55-6a3c3f8e2d10", "5f1d7a3c9e2b", "01HQ3Z9X7KX4T5G6A8B9C0D1E2", "T712345C", "2024-01-05"} {
		if !LooksLikeID(s) {
			t.Errorf("LooksLikeID(%q) = false", s)
		}
	}
	for _, s := range []string{"", "v1", "v2", "http2", "ipv4", "s3", "prices", "deadbeef", "summary", "FindNearest", "{id}"} {
		if LooksLikeID(s) {
			t.Errorf("LooksLikeID(%q) = true", s)
		}
	}
}

// The statement cache gives what normalizing gives, and stops taking
// statements once it holds sqlOpCacheBytes.
func TestSQLOpCache(t *testing.T) {
	c := sqlOpCache{m: map[sqlStmt]string{}}
	stmt := "SELECT * FROM owners WHERE id = 42"
	want := "postgresql " + NormalizeSQL(stmt)
	for range 2 {
		if got := c.get("postgresql", stmt); got != want {
			t.Errorf("get = %q, want %q", got, want)
		}
	}
	long := strings.Repeat("x", sqlOpCacheBytes/4)
	for i := range 8 {
		c.get("postgresql", fmt.Sprintf("SELECT '%s' FROM t%d", long, i))
	}
	if c.bytes > sqlOpCacheBytes {
		t.Errorf("the cache holds %d bytes, past its bound %d", c.bytes, sqlOpCacheBytes)
	}
	if len(c.m) < 2 || len(c.m) > 4 {
		t.Errorf("%d statements held; want the first ones that fit", len(c.m))
	}
}
