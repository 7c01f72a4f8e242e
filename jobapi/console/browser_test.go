//go:build browser

package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/jobledger/jobledger/jobapi/console"
)

// The browser test (tag browser, run by make console-check) drives the
// console in headless Chromium, whose path JOBLEDGER_CHROMIUM names
// (scripts/chromium sets it). Its screenshots go to
// JOBLEDGER_CONSOLE_SHOTS, or to a folder of the system's temporary
// directory; the log names it.

// hostileTask is a task id that would run script if the page wrote it as
// HTML: the test sees it shown as text, and nothing run.
const hostileTask = `<img src=x onerror="window.pwned=1;console.error('pwned')"><script>window.pwned=2</script>`

func TestBrowser(t *testing.T) {
	exe := os.Getenv("JOBLEDGER_CHROMIUM")
	if exe == "" && os.Getenv("CI") == "true" {
		t.Fatal("JOBLEDGER_CHROMIUM is not set, and under CI the browser test must run: run make console-check as root")
	}
	if exe == "" {
		t.Skip("JOBLEDGER_CHROMIUM is not set: run make console-check, whose scripts/chromium finds or installs Chromium")
	}
	shots := os.Getenv("JOBLEDGER_CONSOLE_SHOTS")
	if shots == "" {
		shots = filepath.Join(os.TempDir(), "jobledger-console-shots")
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))
	t.Logf("screenshots in %s", shots)

	b := setup(t, 3, console.Options{Store: "memory", Refresh: 300 * time.Millisecond,
		SampleEvery: 250 * time.Millisecond, Window: 30 * time.Second})
	ts := httptest.NewServer(b.handler)
	defer ts.Close()

	timeout, cancelAll := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancelAll()
	alloc, cancelAlloc := chromedp.NewExecAllocator(timeout, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1100, 860))...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()

	// Every message the page logs, gathered until the end of the test.
	var (
		mu   sync.Mutex
		logs []chromedp.ConsoleMessage
	)
	listen, stopListening := context.WithCancel(ctx)
	listening := make(chan struct{})
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	messages := chromedp.Console(listen)
	go func() {
		defer close(listening)
		for m, err := range messages {
			if err != nil {
				return
			}
			mu.Lock()
			logs = append(logs, m)
			mu.Unlock()
		}
	}()
	defer func() { stopListening(); <-listening }()

	post := func(task string, params string) string {
		resp, err := http.Post(ts.URL+"/jobs", "application/json",
			strings.NewReader(fmt.Sprintf(`{"task_id":%q,"params":%s}`, task, params)))
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode)
		return strings.TrimPrefix(resp.Header.Get("Location"), "jobs/")
	}
	// follow runs steps that end in a navigation, waits for the page, and
	// requires a 200.
	follow := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		resp, err := chromedp.RunResponse(ctx, steps...)
		require.NoError(t, err, what)
		require.Equal(t, int64(http.StatusOK), resp.Status, what)
	}
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
		require.NoError(t, err, sel)
		return strings.TrimSpace(s)
	}
	poll := func(what, expr string) {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(15*time.Second)))
		require.NoError(t, err, what)
	}
	shot := func(name string) {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(shots, name), png, 0o644))
	}
	count := func(state string) string { return `document.getElementById("count-` + state + `").textContent.trim()` }

	// The overview, then jobs submitted through the API: the counts move
	// without a reload.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/console"),
		chromedp.WaitVisible(chromedp.CSS("#count-PENDING"))))
	require.Equal(t, "0", text("#count-PENDING"))
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`))
	require.NoError(t, err)
	held := []string{post("render-1", `{"hold":true}`), post("render-2", `{"hold":true}`)}
	poll("held jobs counted", count("RUNNING")+` === "2"`)
	poll("queue depth", `document.getElementById("queue-depth").textContent === "2"`)
	for i := range 25 {
		post(fmt.Sprintf("invoice-%04d", i), fmt.Sprintf(`{"sleep_ms":%d,"pages":%d}`, 20, i+1))
	}
	post(hostileTask, `{"fail":"boom"}`)
	post(hostileTask, `{}`)
	poll("ended jobs counted", count("DONE")+` === "26" && `+count("FAILED")+` === "1"`)
	poll("the admissions plotted", `document.querySelector("#plot-admitted polyline") !== null`)
	poll("still the same page", `window.notReloaded === true`)
	require.Contains(t, text("#live-status"), "Live")
	shot("overview.png")

	// Hidden behind another tab, the overview stops polling; in front
	// again, it polls at once. A hidden tab gets no animation frames, so
	// these polls run on a timer.
	other, closeOther := chromedp.NewContext(ctx, chromedp.WithNewWindow(false))
	require.NoError(t, chromedp.Do(other, chromedp.Navigate("about:blank")))
	_, err = chromedp.Call(other, page.BringToFront, cdp.Empty{})
	require.NoError(t, err)
	timed := func(what, expr string) {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(15*time.Second)))
		require.NoError(t, err, what)
	}
	timed("paused while hidden", `document.hidden && document.getElementById("live-status").textContent.includes("paused")`)
	_, err = chromedp.Call(ctx, page.BringToFront, cdp.Empty{})
	require.NoError(t, err)
	timed("refreshing when shown", `!document.hidden && document.getElementById("live-status").textContent.includes("updated")`)
	closeOther()

	// The listing, a page at a time.
	rows := `document.querySelectorAll("table.jobs tbody tr").length`
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/console/jobs"),
		chromedp.WaitVisible(chromedp.CSS("#next-page"))))
	poll("a first page of 20", rows+` === 20`)
	follow("the next page", chromedp.Click(chromedp.CSS("#next-page")))
	require.Equal(t, "First page", text(`a[href="/console/jobs?"]`))
	poll("the 9 older jobs", rows+` === 9`)

	// The hostile task id, filtered for and shown as text.
	follow("the listing", chromedp.Navigate(ts.URL+"/console/jobs"))
	follow("the filter", chromedp.SetValue(chromedp.CSS("#f-task"), hostileTask),
		chromedp.Click(chromedp.CSS(`form.filters button`)))
	poll("two jobs of the hostile task id", rows+` === 2 && location.search.includes("task_id=")`)
	follow("the job's page", chromedp.Click(chromedp.CSS(`table.jobs a.job-link`)))
	require.Equal(t, hostileTask, text("#job-task"))
	poll("nothing of it ran", `document.querySelector("#job-task *") === null && window.pwned === undefined`)

	// A job's page.
	done := post("invoice-2026-0042", `{"customer":"ACME","pages":12}`)
	b.wait(t, done)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/console/jobs/"+done),
		chromedp.WaitVisible(chromedp.CSS("#job-result"))))
	require.Equal(t, "DONE", text("#job-state"))
	shot("job.png")

	// Cancel a live job, through the confirmation.
	follow("a live job", chromedp.Navigate(ts.URL+"/console/jobs/"+held[1]))
	follow("the confirmation", chromedp.Click(chromedp.CSS("#cancel")))
	follow("the cancel", chromedp.Click(chromedp.CSS("#confirm-cancel")))
	require.Equal(t, "The job was canceled.", text(".notice"))
	require.Equal(t, "FAILED", text("#job-state"))
	require.Equal(t, "canceled", text("#job-error"))

	// A phone-sized screen: nothing wider than it.
	for _, page := range []string{"/console", "/console/jobs", "/console/jobs/" + done} {
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844),
			chromedp.Navigate(ts.URL+page), chromedp.WaitVisible(chromedp.CSS("main"))))
		poll("no sideways scroll on "+page, `document.documentElement.scrollWidth <= window.innerWidth`)
	}

	// The keyboard: the first Tab reaches the link that skips to the
	// content, and Enter follows it.
	follow("the overview again", chromedp.Navigate(ts.URL+"/console"))
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent("\t")))
	poll("the skip link focused first", `document.activeElement.textContent === "Skip to content"`)
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent("\r")))
	poll("the skip link followed", `location.hash === "#main"`)

	mu.Lock()
	defer mu.Unlock()
	for _, m := range logs {
		require.False(t, m.Type == chromedp.ConsoleError || m.IsException(), "the page logged %s (%s)", m, m.URL)
	}
}
