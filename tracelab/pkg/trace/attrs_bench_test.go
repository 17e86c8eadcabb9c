package trace

import "testing"

// BenchmarkAttrsGet looks up present and absent keys among the 22
// attributes of a Java agent's JDBC span, as detectors do:
//
//	go test ./pkg/trace -run '^$' -bench AttrsGet
func BenchmarkAttrsGet(b *testing.B) {
	a := AttrsOf(map[string]string{
		"db.connection_string": "postgresql://localhost:5432", "db.name": "orders", "db.operation": "SELECT",
		"db.sql.table": "orders", "db.statement": "SELECT * FROM orders WHERE id = ?", "db.system": "postgresql",
		"db.user": "lab", "server.address": "localhost", "server.port": "5432", "thread.id": "52",
		"thread.name": "vert.x-eventloop-thread-0", "code.function": "find", "code.namespace": "lab.Orders",
		"network.peer.address": "127.0.0.1", "network.peer.port": "5432", "network.type": "ipv4",
		"db.query.text": "SELECT * FROM orders WHERE id = ?", "db.system.name": "postgresql",
		"db.namespace": "orders", "db.operation.name": "SELECT", "db.collection.name": "orders", "lab.variant": "baseline",
	})
	keys := []string{"db.system.name", "db.system", "db.query.text", "http.route", "url.full", "thread.name", "messaging.system"}
	for b.Loop() {
		for _, k := range keys {
			a.Get(k)
		}
	}
}
