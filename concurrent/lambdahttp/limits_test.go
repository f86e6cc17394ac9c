package lambdahttp_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// TestLimits: answers that cannot be posted become a 500 that says why;
// a body that is not its claimed base64 a 400.
func TestLimits(t *testing.T) {
	var writeErr error
	big := func(n int, ct string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, writeErr = w.Write(bytes.Repeat([]byte{0xff}, n))
		}
	}
	tests := []struct {
		name     string
		h        http.HandlerFunc
		opts     []lambdahttp.Option
		status   int
		contains string
		writeErr error
	}{
		{"encoded over the limit", big(1000, "text/plain"), []lambdahttp.Option{lambdahttp.WithMaxResponseBytes(1400)}, 500, "once encoded", nil}, // base64 inflates it
		{"encoded under the limit", big(1000, "application/octet-stream"), []lambdahttp.Option{lambdahttp.WithMaxResponseBytes(1500)}, 200, "", nil},
		{"body over the limit", big(7<<20, "application/octet-stream"), nil, 500, "body over 6291456 bytes", lambdahttp.ErrResponseTooLarge},
		{"head over the limit", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Big", strings.Repeat("h", 100))
		}, []lambdahttp.Option{lambdahttp.WithMaxHeaderBytes(64)}, 500, "headers over the limit", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			writeErr = nil
			resp, body := serveBuffered(t, tc.h, event("GET", "/", "", nil), tc.opts...)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.contains) {
				t.Errorf("%d %.200q, want %d with %q", resp.StatusCode, body, tc.status, tc.contains)
			}
			if !errors.Is(writeErr, tc.writeErr) {
				t.Errorf("Write: %v, want %v", writeErr, tc.writeErr)
			}
		})
	}
	t.Run("streamed head over the limit", func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Big", strings.Repeat("h", 100))
			_, writeErr = io.WriteString(w, "body")
		})
		b, err := serveStream(t, h, event("GET", "/", "", nil), lambdahttp.WithMaxHeaderBytes(64))
		head, body := splitStream(t, b)
		if err != nil || head["statusCode"] != 500.0 || !strings.Contains(string(body), "headers over the limit") || !errors.Is(writeErr, lambdahttp.ErrHeaderTooLarge) {
			t.Errorf("%v %v %q %v", err, head, body, writeErr)
		}
	})
	t.Run("bad base64", func(t *testing.T) {
		ev := event("POST", "/", "not base64!", nil)
		ev.IsBase64Encoded = true
		called := false
		h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })
		resp, body := serveBuffered(t, h, ev)
		if called || resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "base64") {
			t.Errorf("%v %d %q", called, resp.StatusCode, body)
		}
		b, _ := serveStream(t, h, ev)
		if head, _ := splitStream(t, b); called || head["statusCode"] != 400.0 {
			t.Errorf("streamed: %v %v", called, head)
		}
	})
}

// TestStreamReadBounded: a stream read through Read, not WriteTo, is
// gathered in memory, up to WithMaxResponseBytes: a handler that writes
// without end gets ErrResponseTooLarge from Write past it, and Read
// returns the error after the bytes that fit.
func TestStreamReadBounded(t *testing.T) {
	const limit, chunk = 256 << 10, 8 << 10
	var accepted int
	var writeErr error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := bytes.Repeat([]byte("w"), chunk)
		for accepted < 64*limit { // without a bound, the test stops it
			n, err := w.Write(b)
			accepted += n
			if err != nil {
				writeErr = err
				return
			}
		}
	})
	r, err := streamBody(h, payload(t, event("GET", "/", "", nil)), lambdahttp.WithMaxResponseBytes(limit))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(struct{ io.Reader }{r}) // Read, not WriteTo
	if accepted > limit+chunk || len(got) > limit {
		t.Errorf("the handler wrote %d bytes, Read gave %d; want at most the limit %d (and a write)", accepted, len(got), limit)
	}
	if !errors.Is(err, lambdahttp.ErrResponseTooLarge) || !errors.Is(writeErr, lambdahttp.ErrResponseTooLarge) {
		t.Errorf("Read: %v, Write: %v; want ErrResponseTooLarge from both", err, writeErr)
	}
}
