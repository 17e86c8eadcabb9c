package load

import (
	"runtime"
	"syscall"
	"time"
)

// precise is the last stretch of a wait that nanosleep takes: more than the
// millisecond by which Go's timer may wake late.
const precise = 2 * time.Millisecond

// sleep waits d with the kernel's high-resolution timer for its last
// stretch. Go's own timers wake a goroutine up to a millisecond late on
// Linux once the program uses the network: the runtime then waits for
// timers in epoll, whose timeout counts whole milliseconds. With time.Sleep
// alone, 17% of kafka-batching's bursty sends (60 requests/s) left more than
// 1 ms behind their instants here; with this, 0.2-0.3%, and antpath's at
// 680 requests/s went from 15% to 0.2-0.3%.
func sleep(d time.Duration) {
	// Most of a long wait goes to Go's timer, which frees this thread's
	// processor for the requests in flight; only the last stretch holds it.
	if d > precise {
		deadline := time.Now().Add(d)
		time.Sleep(d - precise)
		d = time.Until(deadline)
	}
	if d <= 0 {
		return
	}
	// The goroutine this one just readied (the sender of the last request)
	// runs first, not once the runtime notices this thread is asleep.
	runtime.Gosched()
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var left syscall.Timespec
		err := syscall.Nanosleep(&ts, &left)
		if err != syscall.EINTR {
			return
		}
		ts = left
	}
}
