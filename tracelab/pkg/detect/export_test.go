package detect

// ByID returns the registered detector with the given id. Only the
// external tests (package detect_test) look a detector up by id; the lab
// runs them all (All).
func ByID(id string) (Detector, bool) {
	mu.Lock()
	defer mu.Unlock()
	d, ok := registry[id]
	return d, ok
}
