package afteraction

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// requireBrowser, when set (CI sets it), makes a missing Chromium a
// failure rather than a skip.
const requireBrowser = "STORMAUDIT_REQUIRE_BROWSER"

// chromium returns the path of a Chromium (or Chrome) to drive, skipping
// the test when there is none, unless requireBrowser is set.
func chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("STORMAUDIT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(requireBrowser) != "" {
		t.Fatalf("no chromium on PATH, and %s is set (apt-get install chromium)", requireBrowser)
	}
	t.Skipf("no chromium on PATH (apt-get install chromium, or set STORMAUDIT_CHROMIUM); set %s to make this a failure", requireBrowser)
	return ""
}

// loaded is what a headless Chromium saw of a page.
type loaded struct {
	Errors   []string // console errors, exceptions and error log entries
	Requests []string // requests for anything but the page itself
	Charts   int      // svg.chart elements drawn (wider than 100 px, with marks in them)
	Pwned    bool     // window.__pwned was set: an injected script ran
	Online   bool     // navigator.onLine
	LoadMs   float64  // navigation start to the end of the load event
	Shot     []byte   // a PNG of the whole page, when asked for
}

// offlineChromium returns a script that runs bin in a network namespace
// of its own (unshare --net: no interface but a loopback that is down),
// so the browser has no network at all; chromedp talks to it over a
// pipe. It needs the right to make namespaces (root, as in CI).
func offlineChromium(t testing.TB, bin string) string {
	t.Helper()
	if out, err := exec.Command("unshare", "--net", "true").CombinedOutput(); err != nil {
		if os.Getenv(requireBrowser) != "" {
			t.Fatalf("unshare --net: %v: %s", err, out)
		}
		t.Skipf("cannot cut a browser off the network here (unshare --net: %v: %s)", err, out)
	}
	script := filepath.Join(t.TempDir(), "chromium-offline")
	body := "#!/bin/sh\nexec unshare --net -- " + strconv.Quote(bin) + ` "$@"` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// load opens the file at path in a new headless Chromium, with the
// network cut off (offlineChromium) when offline, and reports what it saw.
func load(t testing.TB, path string, offline, shot bool) loaded {
	t.Helper()
	bin := chromium(t)
	if offline {
		bin = offlineChromium(t, bin)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.WindowSize(1200, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	var mu sync.Mutex
	var got loaded
	page := "file://" + path
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				got.Errors = append(got.Errors, fmt.Sprintf("console.%s", e.Type))
			}
		case *runtime.EventExceptionThrown:
			got.Errors = append(got.Errors, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				got.Errors = append(got.Errors, fmt.Sprintf("log (%s): %s", e.Entry.Source, e.Entry.Text))
			}
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; u != page {
				got.Requests = append(got.Requests, u)
			}
		}
	}
	if err := chromedp.Do(ctx); err != nil { // start the browser and its tab
		t.Fatal(err)
	}
	if err := chromedp.Listen(ctx, listen); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	var err error
	eval := func(expr string, v any) {
		if err != nil {
			return
		}
		switch p := v.(type) {
		case *int:
			*p, err = chromedp.Run(ctx, chromedp.Evaluate[int](expr))
		case *bool:
			*p, err = chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		case *float64:
			*p, err = chromedp.Run(ctx, chromedp.Evaluate[float64](expr))
		}
	}
	eval(`[...document.querySelectorAll('svg.chart')].filter(s => s.getBoundingClientRect().width > 100 && s.querySelectorAll('path, text').length > 5).length`, &got.Charts)
	eval(`typeof window.__pwned !== 'undefined'`, &got.Pwned)
	eval(`navigator.onLine`, &got.Online)
	eval(`performance.getEntriesByType('navigation')[0].loadEventEnd`, &got.LoadMs)
	if err != nil {
		t.Fatal(err)
	}
	if shot {
		if got.Shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // late console events
	mu.Lock()
	defer mu.Unlock()
	return got
}

// TestReportInBrowser loads the report of the sample incident, hostile
// client ids and all, in headless Chromium, with the network on and off:
// no console error, no request but the page, every chart drawn, no
// injected script run, and a screenshot that is not blank and shows the
// charts' colours.
func TestReportInBrowser(t *testing.T) {
	chromium(t)
	path, rep := hostileReport(t)
	// activity, TTR, strip, rules; each incident's activity and, where its
	// devices left attempts, what they met by stage
	want := 4 + 2*min(len(rep.Overview.Result.Summary.Fleet.Incidents), DefaultOptions.Incidents)
	for _, r := range rep.Replay {
		if r.Waves != nil {
			want++ // its connect and redelivery waves
		}
	}
	for _, offline := range []bool{false, true} {
		t.Run(map[bool]string{false: "online", true: "offline"}[offline], func(t *testing.T) {
			got := load(t, path, offline, true)
			if len(got.Errors) > 0 {
				t.Errorf("console errors: %q", got.Errors)
			}
			if len(got.Requests) > 0 {
				t.Errorf("the page fetched %q", got.Requests)
			}
			if got.Online == offline {
				t.Errorf("navigator.onLine is %v with the network %s", got.Online, map[bool]string{false: "on", true: "off"}[offline])
			}
			if got.Pwned {
				t.Error("an injected script ran")
			}
			if got.Charts != want {
				t.Errorf("%d charts drawn, want %d", got.Charts, want)
			}
			checkShot(t, got.Shot)
		})
	}
}

// TestBrowserHarness checks that the harness sees what it must fail on:
// a script the page's policy blocks, and a fetch.
func TestBrowserHarness(t *testing.T) {
	chromium(t)
	path := filepath.Join(t.TempDir(), "bad.html")
	page := `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">` +
		`</head><body><script>window.__pwned=1</script><img src="http://192.0.2.1/x.png"></body></html>`
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	got := load(t, path, false, false)
	if len(got.Errors) == 0 {
		t.Error("a blocked script and image gave no console error")
	}
	if got.Pwned {
		t.Error("the policy did not block the script")
	}
	// without the policy, the script runs and the image is fetched
	if err := os.WriteFile(path, []byte(strings.Replace(page, `<meta http-equiv="Content-Security-Policy"`, `<meta name="x"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	got = load(t, path, false, false)
	if !got.Pwned || len(got.Requests) == 0 {
		t.Errorf("without a policy: pwned %v, requests %q; want a script run and a fetch seen", got.Pwned, got.Requests)
	}
}

// checkShot checks that a screenshot is not blank: a good share of its
// pixels are not background, and it has the colours of connected and
// failed socket-opens that the charts draw.
func checkShot(t *testing.T, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	bounds := img.Bounds()
	var ink, green, red int
	near := func(r, g, b uint32, c [3]uint32) bool {
		d := func(x, y uint32) uint32 { return max(x, y) - min(x, y) }
		return d(r, c[0]) < 24 && d(g, c[1]) < 24 && d(b, c[2]) < 24
	}
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			if r < 230 || g < 230 || b < 230 {
				ink++
			}
			if near(r, g, b, [3]uint32{0x2e, 0x7d, 0x32}) {
				green++
			}
			if near(r, g, b, [3]uint32{0xc6, 0x28, 0x28}) {
				red++
			}
		}
	}
	total := (bounds.Dx() / 2) * (bounds.Dy() / 2)
	if total == 0 || float64(ink)/float64(total) < 0.02 || green < 50 || red < 50 {
		t.Errorf("the screenshot (%dx%d) looks blank: %d of %d sampled pixels inked, %d green, %d red", bounds.Dx(), bounds.Dy(), ink, total, green, red)
	}
}
