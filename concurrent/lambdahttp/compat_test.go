package lambdahttp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
)

// compatCases: handlers and requests served through lambdaurl.Wrap and
// StreamingHandler, whose streams must be the same bytes.
func compatCases() []struct {
	name string
	ev   *events.APIGatewayV2HTTPRequest
	h    http.HandlerFunc
} {
	large := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	binary := make([]byte, 3000)
	for i := range binary {
		binary[i] = byte(i * 7)
	}
	echo := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		b, _ := io.ReadAll(r.Body)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"method": r.Method, "url": r.URL.String(), "path": r.URL.Path, "query": r.URL.Query(),
			"body": string(b), "len": r.ContentLength, "host": r.Host, "remote": r.RemoteAddr,
			"x": r.Header.Values("X-Multi"),
		})
	}
	return []struct {
		name string
		ev   *events.APIGatewayV2HTTPRequest
		h    http.HandlerFunc
	}{
		{"hello", event("GET", "/hello", "", nil), func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "hello")
		}},
		{"empty body", event("GET", "/", "", nil), func(w http.ResponseWriter, r *http.Request) {}},
		{"status only", event("DELETE", "/x", "", nil), func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		}},
		{"teapot headers cookies", event("POST", "/t?a=1&b=2&a=3", `{"k":"v"}`, map[string]string{"x-multi": "1,2"}), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Add("X-Two", "a")
			w.Header().Add("X-Two", "b")
			w.Header().Set("X-Html", "<a href='x'>&</a>")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "1", Path: "/", HttpOnly: true})
			http.SetCookie(w, &http.Cookie{Name: "t", Value: "2", Expires: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)})
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, "<p>short and stout</p>")
		}},
		{"only cookies", event("GET", "/", "", nil), func(w http.ResponseWriter, r *http.Request) {
			http.SetCookie(w, &http.Cookie{Name: "only", Value: "me"})
		}},
		{"echo request", event("PUT", "/a%20b/c?q=%C3%A9&r", "payload", map[string]string{"x-multi": "1,2", "content-type": "text/plain"}), echo},
		{"base64 request", func() *events.APIGatewayV2HTTPRequest {
			ev := event("POST", "/bin", base64.StdEncoding.EncodeToString(binary), map[string]string{"content-type": "application/octet-stream"})
			ev.IsBase64Encoded = true
			return ev
		}(), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = io.Copy(w, r.Body)
		}},
		{"binary body", event("GET", "/bin", "", nil), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(binary)
		}},
		{"large body", event("GET", "/large", "", nil), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(large)
		}},
		{"many small writes", event("GET", "/small", "", nil), func(w http.ResponseWriter, r *http.Request) {
			for i := range 5000 {
				_, _ = fmt.Fprintf(w, "line %d\n", i)
			}
		}},
		{"flushes", event("GET", "/sse", "", nil), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				_, _ = fmt.Fprintf(w, "data: %d\n\n", i)
				if f, ok := w.(http.Flusher); ok { // lambdaurl's writer is not one
					f.Flush()
				}
			}
		}},
		{"unicode header", event("GET", "/", "", nil), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-U", "é\u2028\x01\"\\")
			_, _ = io.WriteString(w, "ok")
		}},
	}
}

func lambdaurlRequest(t *testing.T, ev *events.APIGatewayV2HTTPRequest) *events.LambdaFunctionURLRequest {
	t.Helper()
	var fu events.LambdaFunctionURLRequest
	if err := json.Unmarshal(payload(t, ev), &fu); err != nil {
		t.Fatal(err)
	}
	return &fu
}

// TestLambdaurlCompat: for each case, the stream StreamingHandler writes
// (through WriteTo, as the runtime reads it, and through Read) is the bytes
// lambdaurl.Wrap's response reads.
func TestLambdaurlCompat(t *testing.T) {
	for _, tc := range compatCases() {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := lambdaurl.Wrap(tc.h)(context.Background(), lambdaurlRequest(t, tc.ev))
			if err != nil {
				t.Fatal(err)
			}
			want, err := io.ReadAll(resp)
			if err != nil {
				t.Fatal(err)
			}
			got, err := serveStream(t, tc.h, tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("WriteTo stream differs from lambdaurl's:\n got %.300q\nwant %.300q", got, want)
			}
			r, _ := lambdahttpStream(tc.h, tc.ev)
			got, err = io.ReadAll(r)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("Read stream differs (err %v):\n got %.300q\nwant %.300q", err, got, want)
			}
		})
	}
}

// TestBufferedMatchesStream: the buffered answer carries the status,
// headers, cookies and body the stream carries.
func TestBufferedMatchesStream(t *testing.T) {
	for _, tc := range compatCases() {
		t.Run(tc.name, func(t *testing.T) {
			stream, err := serveStream(t, tc.h, tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			head, sbody := splitStream(t, stream)
			resp, body := serveBuffered(t, tc.h, tc.ev)
			if float64(resp.StatusCode) != head["statusCode"] {
				t.Errorf("status %d, stream %v", resp.StatusCode, head["statusCode"])
			}
			if !bytes.Equal(body, sbody) {
				t.Errorf("body %.100q, stream %.100q", body, sbody)
			}
			if fmt.Sprint(resp.Cookies) != fmt.Sprint(anyStrings(head["cookies"])) {
				t.Errorf("cookies %q, stream %v", resp.Cookies, head["cookies"])
			}
			sh, _ := head["headers"].(map[string]any)
			for k, v := range sh {
				if resp.Headers[k] != v {
					t.Errorf("header %s: %q, stream %q", k, resp.Headers[k], v)
				}
			}
			if len(body) > 0 && resp.Headers["Content-Type"] == "" {
				t.Error("no Content-Type on a buffered body")
			}
			if strings.HasPrefix(resp.Headers["Content-Type"], "image/") && !resp.IsBase64Encoded {
				t.Error("binary body not in base64")
			}
		})
	}
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	if l == nil {
		return nil
	}
	s := make([]string, len(l))
	for i, x := range l {
		s[i], _ = x.(string)
	}
	return s
}
