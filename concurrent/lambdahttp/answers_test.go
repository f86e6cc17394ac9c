package lambdahttp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// answerMembers are the members each door's answer may hold: the ones
// its documentation names.
var answerMembers = map[string][]string{
	"1.0":       {"statusCode", "headers", "multiValueHeaders", "body", "isBase64Encoded"},
	"2.0":       {"statusCode", "headers", "cookies", "body", "isBase64Encoded"},
	"ALB":       {"statusCode", "statusDescription", "headers", "body", "isBase64Encoded"},
	"ALB multi": {"statusCode", "statusDescription", "multiValueHeaders", "body", "isBase64Encoded"},
}

// shapeOf names the answer shape the door of payload reads.
func shapeOf(t testing.TB, payload []byte) string {
	t.Helper()
	var ev struct {
		Version           string          `json:"version"`
		MultiValueHeaders json.RawMessage `json:"multiValueHeaders"`
		MultiValueQuery   json.RawMessage `json:"multiValueQueryStringParameters"`
		RequestContext    struct {
			ELB  json.RawMessage `json:"elb"`
			HTTP json.RawMessage `json:"http"`
		} `json:"requestContext"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	switch {
	case ev.RequestContext.ELB != nil && (ev.MultiValueHeaders != nil || ev.MultiValueQuery != nil):
		return "ALB multi"
	case ev.RequestContext.ELB != nil:
		return "ALB"
	case ev.Version == "2.0" || ev.RequestContext.HTTP != nil:
		return "2.0"
	}
	return "1.0"
}

// clientView is how a door turns an answer document into the HTTP
// response its client reads, by the door's documentation: 1.0 merges
// headers and multiValueHeaders (multiValueHeaders win); 2.0 sends each
// cookie as a Set-Cookie line; a load balancer reads headers in
// single-value mode and multiValueHeaders in multi-value mode. A member
// the door does not document fails the test.
func clientView(t testing.TB, shape string, answer []byte) (status int, h http.Header, body string) {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(answer, &doc); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %.200q", err, answer)
	}
	for k := range doc {
		if !slices.Contains(answerMembers[shape], k) {
			t.Errorf("%s answer has member %q: %.300s", shape, k, answer)
		}
	}
	var a struct {
		StatusCode        int                 `json:"statusCode"`
		StatusDescription string              `json:"statusDescription"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Cookies           []string            `json:"cookies"`
		Body              string              `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		t.Fatal(err)
	}
	h = http.Header{}
	switch shape {
	case "1.0":
		for k, v := range a.Headers {
			h[http.CanonicalHeaderKey(k)] = []string{v}
		}
		for k, vs := range a.MultiValueHeaders {
			h[http.CanonicalHeaderKey(k)] = vs
		}
	case "2.0":
		for k, v := range a.Headers {
			h.Add(k, v)
		}
		for _, c := range a.Cookies {
			h.Add("Set-Cookie", c)
		}
	case "ALB", "ALB multi":
		if want := fmt.Sprintf("%d %s", a.StatusCode, http.StatusText(a.StatusCode)); a.StatusDescription != strings.TrimSpace(want) {
			t.Errorf("statusDescription %q, want %q", a.StatusDescription, want)
		}
		if _, ok := doc["isBase64Encoded"]; !ok {
			t.Errorf("ALB answer without isBase64Encoded: %.200s", answer)
		}
		if shape == "ALB" {
			if _, ok := doc["headers"]; !ok {
				t.Errorf("ALB answer without headers: %.200s", answer)
			}
			for k, v := range a.Headers {
				h.Add(k, v)
			}
		} else {
			if _, ok := doc["multiValueHeaders"]; !ok {
				t.Errorf("ALB answer without multiValueHeaders: %.200s", answer)
			}
			for k, vs := range a.MultiValueHeaders {
				h[http.CanonicalHeaderKey(k)] = vs
			}
		}
	}
	body = a.Body
	if a.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(a.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = string(b)
	}
	return a.StatusCode, h, body
}

// clientReads serves payload through Handler(h) and returns what the
// door's client reads.
func clientReads(t testing.TB, h http.Handler, payload []byte, opts ...lambdahttp.Option) (int, http.Header, string) {
	t.Helper()
	var out concurrent.Buffer
	if err := lambdahttp.Handler(h, opts...)(context.Background(), payload, &out); err != nil {
		t.Fatal(err)
	}
	return clientView(t, shapeOf(t, payload), out.B)
}

// TestDoorAnswers: for each door, the answer is in the shape the door
// reads, and its client reads the handler's status, headers, cookies and
// body: text as text, binary in base64.
func TestDoorAnswers(t *testing.T) {
	binary := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xfe, 0xff}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("X-Two", "a")
		w.Header().Add("X-Two", "b")
		http.SetCookie(w, &http.Cookie{Name: "s", Value: "1", Path: "/", HttpOnly: true})
		http.SetCookie(w, &http.Cookie{Name: "t", Value: "2"})
		if r.Method == http.MethodGet || r.Method == http.MethodDelete {
			w.Header().Set("Content-Type", "image/png")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write(binary)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "created ✓ <&>")
	})
	for _, tc := range doorCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.payload(t)
			shape := shapeOf(t, p)
			var out concurrent.Buffer
			if err := lambdahttp.Handler(h)(context.Background(), p, &out); err != nil {
				t.Fatal(err)
			}
			status, got, body := clientView(t, shape, out.B)
			wantStatus, wantBody, wantType := http.StatusCreated, "created ✓ <&>", "text/plain; charset=utf-8"
			if m := tc.want.Method; m == http.MethodGet || m == http.MethodDelete {
				wantStatus, wantBody, wantType = http.StatusAccepted, string(binary), "image/png"
				if !strings.Contains(out.String(), `"isBase64Encoded":true`) {
					t.Errorf("binary body not in base64: %.300s", out.B)
				}
			} else if strings.Contains(out.String(), `"isBase64Encoded":true`) {
				t.Errorf("text body in base64: %.300s", out.B)
			}
			wantHeader := http.Header{"Content-Type": {wantType}, "X-Two": {"a", "b"}, "Set-Cookie": {"s=1; Path=/; HttpOnly", "t=2"}}
			switch shape {
			case "2.0":
				wantHeader["X-Two"] = []string{"a,b"}
			case "ALB":
				wantHeader["X-Two"] = []string{"a,b"}
				wantHeader["Set-Cookie"] = []string{"s=1; Path=/; HttpOnly"} // one value a header
			}
			if status != wantStatus || body != wantBody || indented(got) != indented(wantHeader) {
				t.Errorf("%s client reads %d %q %v; want %d %q %v\nanswer %.400s", shape, status, body, got, wantStatus, wantBody, wantHeader, out.B)
			}
		})
	}
}

// TestEmptyAnswer: a handler that writes nothing answers 200 with no
// body at every door.
func TestEmptyAnswer(t *testing.T) {
	for _, tc := range doorCases() {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := clientReads(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), tc.payload(t))
			if status != http.StatusOK || body != "" || len(h) != 0 {
				t.Errorf("%d %v %q, want 200, no header, no body", status, h, body)
			}
		})
	}
}

// TestWithText: the text rule decides between a JSON string and base64,
// at every door; invalid UTF-8 goes in base64 whatever it says.
func TestWithText(t *testing.T) {
	body := func(ct, b string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, _ = io.WriteString(w, b)
		})
	}
	custom := lambdahttp.WithText(func(ct, ce string) bool { return ct == "application/vnd.lmigo" })
	tests := []struct {
		name   string
		h      http.Handler
		opts   []lambdahttp.Option
		base64 bool
	}{
		{"default text", body("application/json", `{"a":1}`), nil, false},
		{"default binary", body("application/octet-stream", "abc"), nil, true},
		{"default invalid UTF-8", body("text/plain", "\xff\xfe"), nil, true},
		{"custom text", body("application/vnd.lmigo", "abc"), []lambdahttp.Option{custom}, false},
		{"custom binary", body("text/plain", "abc"), []lambdahttp.Option{custom}, true},
		{"custom invalid UTF-8", body("application/vnd.lmigo", "\xff"), []lambdahttp.Option{custom}, true},
	}
	for _, tc := range tests {
		for _, door := range []string{"2.0", "REST", "ALB", "ALB multi"} {
			t.Run(tc.name+"/"+door, func(t *testing.T) {
				var out concurrent.Buffer
				if err := lambdahttp.Handler(tc.h, tc.opts...)(context.Background(), benchEvent(t, door), &out); err != nil {
					t.Fatal(err)
				}
				if got := strings.Contains(out.String(), `"isBase64Encoded":true`); got != tc.base64 {
					t.Errorf("base64 %v, want %v: %.200s", got, tc.base64, out.B)
				}
			})
		}
	}
}
