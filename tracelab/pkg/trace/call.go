package trace

import "strings"

// CallType says what kind of dependency an outgoing call goes to.
type CallType string

// Call types. CallNone marks spans that are not outgoing calls.
const (
	CallNone      CallType = ""
	CallHTTP      CallType = "http"
	CallRPC       CallType = "rpc"
	CallDB        CallType = "db"
	CallCache     CallType = "cache"
	CallMessaging CallType = "messaging"
	CallOther     CallType = "other"
)

// IsCall reports whether s is an outgoing call the calling code waits for.
//
// CLIENT spans are calls; that covers HTTP and RPC clients and current
// database and cache instrumentations (HotROD's simulated Redis and MySQL
// spans are CLIENT too). INTERNAL or unspecified spans that carry
// db.system are also calls: some database libraries and older
// instrumentations report them that way, and the wait is just as real.
// PRODUCER spans are not: a producer hands the message to a buffer and
// does not wait for the consumer, so repeating them is a batching question
// (kafka-producer-contention), not a round-trip one.
func IsCall(s *Span) bool {
	switch s.Kind {
	case KindClient:
		return true
	case KindInternal, KindUnspecified:
		return s.Attr("db.system.name", "db.system") != ""
	}
	return false
}

// Classify returns the call type of an outgoing call, or CallNone when s
// is not one (see IsCall).
func Classify(s *Span) CallType {
	if !IsCall(s) {
		return CallNone
	}
	if sys := s.Attr("db.system.name", "db.system"); sys != "" {
		if cacheSystems[strings.ToLower(sys)] {
			return CallCache
		}
		return CallDB
	}
	if s.Attr("rpc.system", "rpc.service", "rpc.method") != "" {
		return CallRPC
	}
	if s.Attr("http.request.method", "http.method", "url.full", "http.url") != "" {
		return CallHTTP
	}
	if s.Attr("messaging.system") != "" {
		return CallMessaging
	}
	return CallOther
}
