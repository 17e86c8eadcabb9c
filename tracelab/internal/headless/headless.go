// Package headless starts the OS's Chromium without a display for the
// programs that look at the trace explorer as a person would: the
// end-to-end test and make bench-explorer.
package headless

import (
	"context"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser starts chromium with a fresh profile in profileDir ("" for a
// temporary one chromedp removes) and returns a tab's context, ended after
// timeout; stop closes the browser.
func Browser(chromium, profileDir string, timeout time.Duration) (ctx context.Context, stop func()) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))
	if profileDir != "" {
		opts = append(opts, chromedp.UserDataDir(profileDir))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(tab, timeout)
	return ctx, func() { cancelTimeout(); cancelTab(); cancelAlloc() }
}
