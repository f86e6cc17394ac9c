package concurrent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/rapi/rapitest"
)

// wtBody writes its pieces out, one Write each (io.WriterTo); "!panic"
// panics and "!goexit" calls runtime.Goexit. It is never Read.
type wtBody struct{ pieces []string }

func (b *wtBody) Read([]byte) (int, error) { panic("wtBody is written out, not read") }

func (b *wtBody) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range b.pieces {
		switch p {
		case "!panic":
			panic("writer broke")
		case "!goexit":
			runtime.Goexit()
		}
		k, err := w.Write([]byte(p))
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestStreamingWriterTo: a reader result that writes itself out is
// streamed whole from its own bytes; a panic in WriteTo fails the
// invocation as one in Read does (trailers after the first byte, an
// /error before it), and so does runtime.Goexit.
func TestStreamingWriterTo(t *testing.T) {
	api := newAPI(t, rapitest.Options{MaxConcurrency: 1, Queue: true})
	big := bytes.Repeat([]byte("w"), 2<<20)
	serve(t, api, env{"AWS_LAMBDA_MAX_CONCURRENCY": "1"}, func(_ context.Context, c string) (io.Reader, error) {
		switch c {
		case "big":
			return bytes.NewReader(big), nil
		case "late panic":
			return &wtBody{[]string{"partial", "!panic"}}, nil
		case "early panic":
			return &wtBody{[]string{"!panic"}}, nil
		case "late goexit":
			return &wtBody{[]string{"partial", "!goexit"}}, nil
		case "early goexit":
			return &wtBody{[]string{"!goexit"}}, nil
		}
		return &wtBody{[]string{"a", "", "bc"}}, nil
	})
	tests := []struct {
		name    string
		body    string
		errType string
		trailer bool
	}{
		{name: "big", body: string(big)},
		{name: "pieces", body: "abc"},
		{name: "late panic", body: "partial", errType: "string", trailer: true},
		{name: "early panic", errType: "string"},
		{name: "late goexit", body: "partial", errType: rapitest.ErrorTypeTruncated},
		{name: "early goexit", errType: "Runtime.HandlerExited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := json.Marshal(tt.name)
			r := invoke(t, api, string(q))
			if tt.errType == "" {
				if r.Err != nil || string(r.Body) != tt.body || r.ResponseMode != rapitest.ResponseModeStreaming {
					t.Fatalf("got %d bytes in mode %q, err %+v", len(r.Body), r.ResponseMode, r.Err)
				}
				return
			}
			if r.Err == nil || r.Err.Type != tt.errType || r.Err.Trailer != tt.trailer || (tt.trailer && string(r.Body) != tt.body) {
				t.Fatalf("got %q, err %+v; want type %s, trailer %v", abbrev(r.Body), r.Err, tt.errType, tt.trailer)
			}
			if strings.Contains(tt.name, "panic") && !bytes.Contains(r.Err.Body, []byte("writer broke")) {
				t.Fatalf("error document %s", r.Err.Body)
			}
		})
	}
	if r := invoke(t, api, `"pieces"`); r.Err != nil || string(r.Body) != "abc" {
		t.Fatalf("after the failures: %+v", r)
	}
}

func abbrev(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
