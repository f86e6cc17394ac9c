package rapitest

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// TestStreamedResponses: a streamed /response is read as the emulator reads
// it: its data, its mode, and error trailers that make it a function error.
func TestStreamedResponses(t *testing.T) {
	doc := `{"errorMessage":"late","errorType":"Function.Late"}`
	head := func(id, mode string) string {
		h := "POST " + pathInvocation + id + "/response HTTP/1.1\r\nHost: fake\r\nContent-Type: text/plain\r\n"
		if mode != "" {
			h += hdrResponseMode + ": " + mode + "\r\n"
		}
		return h + "Transfer-Encoding: chunked\r\nTrailer: " + hdrErrorType + ", " + hdrErrorBody + "\r\n\r\n"
	}
	tests := []struct {
		name     string
		mode     string
		body     string
		status   int
		want     Result // RequestID, Status and Latency are not compared
		errors   int64
		badReqs  int64
		truncate bool
	}{
		{name: "streamed", mode: "streaming", body: "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", status: 202,
			want: Result{Body: []byte("hello world"), ContentType: "text/plain", ResponseMode: ResponseModeStreaming}},
		{name: "empty", mode: "streaming", body: "0\r\n\r\n", status: 202,
			want: Result{Body: []byte{}, ContentType: "text/plain", ResponseMode: ResponseModeStreaming}},
		{name: "chunked, buffered mode", body: "2\r\nok\r\n0\r\n\r\n", status: 202,
			want: Result{Body: []byte("ok"), ContentType: "text/plain"}},
		{name: "error trailers", mode: "streaming", status: 202, errors: 1,
			body: "4\r\npart\r\n0\r\n" + hdrErrorType + ": Function.Late\r\n" + hdrErrorBody + ": " + base64.StdEncoding.EncodeToString([]byte(doc)) + "\r\n\r\n",
			want: Result{Body: []byte("part"), ContentType: "text/plain", ResponseMode: ResponseModeStreaming,
				Err: &FunctionError{Type: "Function.Late", Body: []byte(doc), Trailer: true}}},
		{name: "error body not base64", mode: "streaming", status: 202, errors: 1,
			body: "1\r\nx\r\n0\r\n" + hdrErrorType + ": E\r\n" + hdrErrorBody + ": %%%\r\n\r\n",
			want: Result{Body: []byte("x"), ContentType: "text/plain", ResponseMode: ResponseModeStreaming,
				Err: &FunctionError{Type: "E", Trailer: true}}},
		{name: "trailers over 4 KiB", mode: "streaming", status: 400, truncate: true, badReqs: 1,
			body: "1\r\nx\r\n0\r\n" + hdrErrorType + ": E\r\n" + hdrErrorBody + ": " + strings.Repeat("A", 4100) + "\r\n\r\n",
			want: Result{Err: &FunctionError{Type: ErrorTypeTruncated, Body: errTruncated}}},
		{name: "bad mode", mode: "fast", body: "1\r\nx\r\n0\r\n\r\n", status: 400, errors: 1, badReqs: 1,
			want: Result{Err: &FunctionError{Type: ErrorTypeInvalidResponseMode, Body: errInvalidMode}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, Options{})
			ctx := testCtx(t)
			rc := pollRaw(t, s)
			res := invokeAsync(ctx, s, Request{Payload: []byte(`{}`)})
			resp, _ := rc.read()
			id := resp.Header.Get(hdrRequestID)
			rc.write(head(id, tt.mode) + tt.body)
			if resp, body := rc.read(); resp.StatusCode != tt.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, tt.status)
			}
			r := recv(t, res)
			if r.err != nil {
				t.Fatal(r.err)
			}
			got := r.res
			if string(got.Body) != string(tt.want.Body) || (got.Body == nil) != (tt.want.Body == nil) ||
				got.ContentType != tt.want.ContentType || got.ResponseMode != tt.want.ResponseMode || got.Status != http.StatusOK {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			switch ge, we := got.Err, tt.want.Err; {
			case (ge == nil) != (we == nil):
				t.Fatalf("err %+v, want %+v", ge, we)
			case ge != nil && (ge.Type != we.Type || string(ge.Body) != string(we.Body) || ge.Trailer != we.Trailer):
				t.Fatalf("err %s %q trailer %v, want %s %q trailer %v", ge.Type, ge.Body, ge.Trailer, we.Type, we.Body, we.Trailer)
			}
			st := s.Stats()
			if st.Errors != tt.errors || st.BadRequests != tt.badReqs || (st.Truncated == 1) != tt.truncate || st.Answered() != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}
