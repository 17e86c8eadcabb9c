package trace

import (
	"slices"
	"strings"
)

// KeyValue is one span attribute.
type KeyValue struct{ Key, Value string }

// Attrs are a span's attributes sorted by key, each key once, every value
// rendered as a string (ints in decimal, arrays as JSON). A sorted slice
// rather than a map: a span has a handful of attributes, a map per span
// was half the memory of a parsed million-span file and a third of its
// parse time, and a look-up among five keys is as fast in a slice.
type Attrs []KeyValue

// AttrsOf returns m as Attrs.
func AttrsOf(m map[string]string) Attrs {
	a := make(Attrs, 0, len(m))
	for k, v := range m {
		a = append(a, KeyValue{k, v})
	}
	slices.SortFunc(a, func(x, y KeyValue) int { return strings.Compare(x.Key, y.Key) })
	return a
}

// Get returns the value of key and whether it is present.
func (a Attrs) Get(key string) (string, bool) {
	if len(a) <= 32 {
		// A scan that compares lengths first: keys share long prefixes
		// (http., db., thread.), so each step of a binary search compared
		// bytes deep into both, and real spans carry 10 to 30 keys.
		for i := range a {
			if len(a[i].Key) == len(key) && a[i].Key == key {
				return a[i].Value, true
			}
		}
		return "", false
	}
	i, ok := slices.BinarySearchFunc(a, key, func(kv KeyValue, k string) int { return strings.Compare(kv.Key, k) })
	if ok {
		return a[i].Value, true
	}
	return "", false
}

// Value returns the value of key, "" when absent.
func (a Attrs) Value(key string) string {
	v, _ := a.Get(key)
	return v
}

// Set sets key to value, keeping the order.
func (a *Attrs) Set(key, value string) {
	i, ok := slices.BinarySearchFunc(*a, key, func(kv KeyValue, k string) int { return strings.Compare(kv.Key, k) })
	if ok {
		(*a)[i].Value = value
		return
	}
	*a = slices.Insert(*a, i, KeyValue{key, value})
}

// Map returns the attributes as a new map.
func (a Attrs) Map() map[string]string {
	m := make(map[string]string, len(a))
	for _, kv := range a {
		m[kv.Key] = kv.Value
	}
	return m
}
