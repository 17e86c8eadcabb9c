//go:build race

package train

// raceDetector: these tests run under go test -race. The race detector
// makes reading and masking every recording (and the analyzer's pass over
// them) several times slower: the whole-set tests took 259 s of a cold CI
// run under it, so make test-go runs them again without it instead.
const raceDetector = true
