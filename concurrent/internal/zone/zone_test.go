package zone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testZone  = "use1-az1"
	testToken = "token-of-this-environment"
)

// fakeMetadata stands in for Lambda's metadata endpoint on loopback. Like
// the endpoint (the emulator's internal/lmds), it refuses a method other
// than GET (405) and a missing or wrong bearer token (401); it answers
// 404 on another path. answer writes the reply to a request that passed.
type fakeMetadata struct {
	srv      *httptest.Server
	requests atomic.Int32 // every request, accepted or not
	refused  atomic.Int32 // those refused for method, path or token
}

func newFakeMetadata(t *testing.T, answer http.HandlerFunc) *fakeMetadata {
	t.Helper()
	f := &fakeMetadata{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		switch {
		case r.URL.Path != metadataPath:
			f.refused.Add(1)
			http.NotFound(w, r)
		case r.Method != http.MethodGet:
			f.refused.Add(1)
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		case r.Header.Get("Authorization") != "Bearer "+testToken:
			f.refused.Add(1)
			http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
		default:
			answer(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// env is a lookup that holds the endpoint's address and the token.
func (f *fakeMetadata) env(name string) (string, bool) {
	switch name {
	case envMetadataAPI:
		return f.srv.Listener.Addr().String(), true
	case envMetadataToken:
		return testToken, true
	}
	return "", false
}

// answerZone answers as the endpoint does: JSON, private, immutable.
func answerZone(zone string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "private, max-age=43200, immutable")
		fmt.Fprintf(w, `{"AvailabilityZoneID":%q}`, zone)
	}
}

// blockUntil answers with the zone once release is closed, or gives up
// when the client goes away.
func blockUntil(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
			answerZone(testZone)(w, r)
		case <-r.Context().Done():
		}
	}
}

// wait waits for the request in flight, if any, to end: no goroutine of
// the reader outlives a test.
func (z *Reader) wait() {
	z.mu.Lock()
	done := z.inflight
	z.mu.Unlock()
	if done != nil {
		<-done
	}
}

func TestZoneReadsEndpointOnce(t *testing.T) {
	f := newFakeMetadata(t, func(w http.ResponseWriter, _ *http.Request) {
		// Members other than the zone are ignored: the endpoint may add some.
		fmt.Fprintf(w, `{"CapacityProviderArn":"arn:aws:ecs:x","AvailabilityZoneID":%q}`, testZone)
	})
	z := NewReader(f.env)
	for i := range 3 {
		got, err := z.Get(t.Context())
		if err != nil || got != testZone {
			t.Fatalf("call %d: %q, %v; want %q", i, got, err, testZone)
		}
	}
	if n, bad := f.requests.Load(), f.refused.Load(); n != 1 || bad != 0 {
		t.Fatalf("%d requests (%d refused), want 1 accepted", n, bad)
	}
}

func TestZoneAbsent(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want error
	}{
		{"neither", nil, ErrNoMetadata},
		{"no token", map[string]string{envMetadataAPI: "127.0.0.1:9"}, ErrNoMetadata},
		{"no address", map[string]string{envMetadataToken: testToken}, ErrNoMetadata},
		{"empty", map[string]string{envMetadataAPI: "", envMetadataToken: ""}, ErrNoMetadata},
		{"no port", map[string]string{envMetadataAPI: "127.0.0.1", envMetadataToken: testToken}, ErrMetadata},
		{"a path", map[string]string{envMetadataAPI: "127.0.0.1:9/x", envMetadataToken: testToken}, ErrMetadata},
		{"a user", map[string]string{envMetadataAPI: "u@127.0.0.1:9", envMetadataToken: testToken}, ErrMetadata},
		{"no host", map[string]string{envMetadataAPI: ":9", envMetadataToken: testToken}, ErrMetadata},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := NewReader(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			got, err := z.Get(t.Context())
			if got != "" || !errors.Is(err, tt.want) {
				t.Fatalf("got %q, %v; want %v", got, err, tt.want)
			}
			if z.inflight != nil || z.err != nil {
				t.Fatalf("a request was started or a failure kept: %v", z.err)
			}
		})
	}
}

func TestZoneFailures(t *testing.T) {
	tests := []struct {
		name   string
		answer http.HandlerFunc
		want   string // in the error
	}{
		{"500", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "broken", http.StatusInternalServerError) }, "500"},
		{"503 before the zone is known", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }, "503"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) }, "302"},
		{"bad JSON", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"AvailabilityZoneID":"use1-az1"`) }, "JSON"},
		{"not an object", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `["use1-az1"]`) }, "JSON"},
		{"no zone", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{}`) }, "no AvailabilityZoneID"},
		{"another case", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"AvailabilityZoneId":"use1-az1"}`) }, "no AvailabilityZoneID"},
		{"a number", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"AvailabilityZoneID":1}`) }, "not a string"},
		{"empty", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"AvailabilityZoneID":""}`) }, "not a zone ID"},
		{"null", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"AvailabilityZoneID":null}`) }, "not a zone ID"},
		{"a line break", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"AvailabilityZoneID":"use1\naz1"}`) }, "not a zone ID"},
		{"too long", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, `{"AvailabilityZoneID":%q,"pad":"%s"}`, testZone, strings.Repeat("x", zoneMaxBody))
		}, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeMetadata(t, tt.answer)
			z := NewReader(f.env)
			got, err := z.Get(t.Context())
			if got != "" || !errors.Is(err, ErrMetadata) || errors.Is(err, ErrNoMetadata) {
				t.Fatalf("got %q, %v; want an ErrMetadata", got, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Fatalf("error %q shows the token", err)
			}
		})
	}
}

func TestZoneWrongToken(t *testing.T) {
	f := newFakeMetadata(t, answerZone(testZone))
	z := NewReader(func(k string) (string, bool) {
		if k == envMetadataToken {
			return "another-" + testToken, true
		}
		return f.env(k)
	})
	if _, err := z.Get(t.Context()); !errors.Is(err, ErrMetadata) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("got %v, want ErrMetadata with 401", err)
	}
	if f.refused.Load() != 1 {
		t.Fatalf("the endpoint refused %d requests, want 1", f.refused.Load())
	}
}

// TestZoneTimeout: an endpoint that never answers fails the read after
// the reader's timeout. The verdict does not depend on the timeout's
// length: the endpoint hangs until the client goes away.
func TestZoneTimeout(t *testing.T) {
	f := newFakeMetadata(t, blockUntil(nil))
	z := NewReader(f.env)
	z.Timeout = 10 * time.Millisecond
	_, err := z.Get(t.Context())
	if !errors.Is(err, ErrMetadata) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want ErrMetadata wrapping context.DeadlineExceeded", err)
	}
}

// TestZoneCallerContext: a caller whose context ends stops waiting at
// once; the request goes on, and the next call has the zone from it.
func TestZoneCallerContext(t *testing.T) {
	release := make(chan struct{})
	f := newFakeMetadata(t, blockUntil(release))
	z := NewReader(f.env)
	z.Timeout = time.Hour // the release ends the request, not the timeout
	ctx, cancel := context.WithCancel(t.Context())
	z.Waiting = cancel // the caller's context ends while it waits
	if _, err := z.Get(ctx); !errors.Is(err, context.Canceled) || errors.Is(err, ErrMetadata) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	z.Waiting = nil
	close(release)
	z.wait()
	if got, err := z.Get(t.Context()); err != nil || got != testZone {
		t.Fatalf("after the request: %q, %v", got, err)
	}
	if n := f.requests.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

// TestZoneFailureRemembered: a failure is returned without a request
// until zoneRetry has passed; the call after that tries again.
func TestZoneFailureRemembered(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	f := newFakeMetadata(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, "broken", http.StatusInternalServerError)
			return
		}
		answerZone(testZone)(w, r)
	})
	z := NewReader(f.env)
	now := time.Unix(1e9, 0)
	z.now = func() time.Time { return now }
	first, err := z.Get(t.Context())
	if !errors.Is(err, ErrMetadata) {
		t.Fatalf("got %q, %v; want ErrMetadata", first, err)
	}
	fail.Store(false)
	now = now.Add(zoneRetry - time.Nanosecond)
	if _, again := z.Get(t.Context()); again != err {
		t.Fatalf("within the retry interval: %v, want the same failure %v", again, err)
	}
	if n := f.requests.Load(); n != 1 {
		t.Fatalf("%d requests within the retry interval, want 1", n)
	}
	now = now.Add(time.Nanosecond)
	if got, err := z.Get(t.Context()); err != nil || got != testZone {
		t.Fatalf("after the retry interval: %q, %v", got, err)
	}
	if n := f.requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

// TestZone64FirstCalls: 64 first calls at once make one request, and
// each gets the zone from it.
func TestZone64FirstCalls(t *testing.T) {
	const n = 64
	release := make(chan struct{})
	f := newFakeMetadata(t, blockUntil(release))
	z := NewReader(f.env)
	z.Timeout = time.Hour // the release ends the request, not the timeout
	var waiting sync.WaitGroup
	waiting.Add(n)
	z.Waiting = waiting.Done
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			got, err := z.Get(t.Context())
			if err == nil && got != testZone {
				err = fmt.Errorf("got %q", got)
			}
			errs <- err
		})
	}
	waiting.Wait() // all 64 wait for the request in flight
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := f.requests.Load(); got != 1 {
		t.Fatalf("%d requests for %d first calls, want 1", got, n)
	}
}

func TestZoneCachedAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	f := newFakeMetadata(t, answerZone(testZone))
	z := NewReader(f.env)
	if _, err := z.Get(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if n := testing.AllocsPerRun(100, func() { _, _ = z.Get(ctx) }); n != 0 {
		t.Fatalf("a cached read allocates %v times, want 0", n)
	}
	absent := NewReader(func(string) (string, bool) { return "", false })
	if n := testing.AllocsPerRun(100, func() { _, _ = absent.Get(ctx) }); n != 0 {
		t.Fatalf("a read without the endpoint allocates %v times, want 0", n)
	}
}

// FuzzParseZone: whatever the endpoint answers, parseZone does not panic,
// and what it accepts is a zone ID that the answer holds under the exact
// member name, and that reads back the same from the endpoint's own shape.
func FuzzParseZone(f *testing.F) {
	for _, s := range []string{
		`{"AvailabilityZoneID":"use1-az1"}`,
		`{"AvailabilityZoneID":"usw2-lax1-az1","CapacityProviderArn":"arn"}`,
		`{"AvailabilityZoneID":"use1-az1","AvailabilityZoneID":"use1-az2"}`,
		`{"availabilityzoneid":"use1-az1"}`,
		`{"AvailabilityZoneID":"\u0075se1-az1"}`,
		`{"AvailabilityZoneID":null}`, `null`, `[]`, `{}`, ``, `{"AvailabilityZoneID":"use1-az1"} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		id, err := parseZone(body)
		if err != nil {
			if id != "" {
				t.Fatalf("an error and a zone %q", id)
			}
			return
		}
		if !validZoneID(id) {
			t.Fatalf("accepted %q, not a zone ID", id)
		}
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("accepted %q from an answer encoding/json refuses: %v", id, err)
		}
		if doc["AvailabilityZoneID"] != id {
			t.Fatalf("accepted %q, the answer holds %#v", id, doc["AvailabilityZoneID"])
		}
		again, err := parseZone(fmt.Appendf(nil, `{"AvailabilityZoneID":%q}`, id))
		if err != nil || again != id {
			t.Fatalf("%q does not read back: %q, %v", id, again, err)
		}
	})
}
