package rapi

import (
	"errors"
	"strings"
	"testing"
)

const testHost = "127.0.0.1:9001"

func testPrefixes() *prefixes { return newPrefixes(testHost, "ua/1") }

const wantCommon = " HTTP/1.1\r\nHost: 127.0.0.1:9001\r\nUser-Agent: ua/1\r\n"

func TestNextRequestBytes(t *testing.T) {
	want := "GET /2018-06-01/runtime/invocation/next" + wantCommon + "\r\n"
	if got := string(testPrefixes().next); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestBuildRequests(t *testing.T) {
	big := strings.Repeat("x", 5000)
	tests := []struct {
		name  string
		build func(r *request) error
		want  string
	}{
		{
			name: "response",
			build: func(r *request) error {
				return buildResponse(r, testPrefixes(), &Invocation{RequestID: "abc-1"}, "application/json", []byte("{}"))
			},
			want: "POST /2018-06-01/runtime/invocation/abc-1/response" + wantCommon +
				"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		},
		{
			name: "response without content type, empty body",
			build: func(r *request) error {
				return buildResponse(r, testPrefixes(), &Invocation{RequestID: "abc-1"}, "", nil)
			},
			want: "POST /2018-06-01/runtime/invocation/abc-1/response" + wantCommon + "Content-Length: 0\r\n\r\n",
		},
		{
			name: "response large body",
			build: func(r *request) error {
				return buildResponse(r, testPrefixes(), &Invocation{RequestID: "id"}, "text/plain", []byte(big))
			},
			want: "POST /2018-06-01/runtime/invocation/id/response" + wantCommon +
				"Content-Type: text/plain\r\nContent-Length: 5000\r\n\r\n" + big,
		},
		{
			name: "error",
			build: func(r *request) error {
				return buildError(r, testPrefixes(), &Invocation{RequestID: "abc-1"}, "Handler.Error", []byte(`{"errorMessage":"x"}`), nil)
			},
			want: "POST /2018-06-01/runtime/invocation/abc-1/error" + wantCommon +
				"Lambda-Runtime-Function-Error-Type: Handler.Error\r\nContent-Type: application/json\r\n" +
				"Content-Length: 20\r\n\r\n" + `{"errorMessage":"x"}`,
		},
		{
			name: "error with xray cause",
			build: func(r *request) error {
				return buildError(r, testPrefixes(), &Invocation{RequestID: "abc-1"}, "E", []byte("{}"), []byte(`{"paths":[]}`))
			},
			want: "POST /2018-06-01/runtime/invocation/abc-1/error" + wantCommon +
				"Lambda-Runtime-Function-Error-Type: E\r\nContent-Type: application/json\r\n" +
				`Lambda-Runtime-Function-XRay-Error-Cause: {"paths":[]}` + "\r\nContent-Length: 2\r\n\r\n{}",
		},
		{
			name: "error xray cause with CRLF is left out, empty type omitted",
			build: func(r *request) error {
				return buildError(r, testPrefixes(), &Invocation{RequestID: "abc-1"}, "", []byte("{}"), []byte("a\r\nX-Evil: 1"))
			},
			want: "POST /2018-06-01/runtime/invocation/abc-1/error" + wantCommon +
				"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		},
		{
			name: "error xray cause of 1 MiB is left out",
			build: func(r *request) error {
				return buildError(r, testPrefixes(), &Invocation{RequestID: "abc-1"}, "E", nil, make([]byte, 1<<20))
			},
			want: "POST /2018-06-01/runtime/invocation/abc-1/error" + wantCommon +
				"Lambda-Runtime-Function-Error-Type: E\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n",
		},
		{
			name: "response echoes the invocation ID",
			build: func(r *request) error {
				return buildResponse(r, testPrefixes(), &Invocation{RequestID: "abc-1", InvocationID: "inv-7"}, "application/json", []byte("{}"))
			},
			want: "POST /2018-06-01/runtime/invocation/abc-1/response" + wantCommon +
				"Lambda-Runtime-Invocation-Id: inv-7\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		},
		{
			name: "error echoes the invocation ID",
			build: func(r *request) error {
				return buildError(r, testPrefixes(), &Invocation{RequestID: "abc-1", InvocationID: "inv-7"}, "E", []byte("{}"), nil)
			},
			want: "POST /2018-06-01/runtime/invocation/abc-1/error" + wantCommon +
				"Lambda-Runtime-Invocation-Id: inv-7\r\nLambda-Runtime-Function-Error-Type: E\r\nContent-Type: application/json\r\n" +
				"Content-Length: 2\r\n\r\n{}",
		},
		{
			name: "stream head echoes the invocation ID",
			build: func(r *request) error {
				return buildStreamHead(r, testPrefixes(), &Invocation{RequestID: "abc-1", InvocationID: "inv-7"}, "text/plain")
			},
			want: "POST /2018-06-01/runtime/invocation/abc-1/response" + wantCommon +
				"Lambda-Runtime-Invocation-Id: inv-7\r\nContent-Type: text/plain\r\n" +
				"Lambda-Runtime-Function-Response-Mode: streaming\r\nTransfer-Encoding: chunked\r\n" +
				"Trailer: Lambda-Runtime-Function-Error-Type, Lambda-Runtime-Function-Error-Body\r\n\r\n",
		},
		{
			name:  "init error",
			build: func(r *request) error { return buildInitError(r, testPrefixes(), "Runtime.Init", []byte("{}")) },
			want: "POST /2018-06-01/runtime/init/error" + wantCommon +
				"Lambda-Runtime-Function-Error-Type: Runtime.Init\r\nContent-Type: application/json\r\n" +
				"Content-Length: 2\r\n\r\n{}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r request
			if err := tt.build(&r); err != nil {
				t.Fatal(err)
			}
			if got := string(r.bytes()); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestBuildRefusesUnsafeValues(t *testing.T) {
	p := testPrefixes()
	tests := []struct {
		name  string
		build func(r *request) error
	}{
		{"empty id", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: ""}, "", nil) }},
		{"dot id", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "."}, "", nil) }},
		{"dotdot id", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: ".."}, "", nil) }},
		{"slash", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "a/b"}, "", nil) }},
		{"space", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "a b"}, "", nil) }},
		{"crlf", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "a\r\nHost: x"}, "", nil) }},
		{"lf", func(r *request) error { return buildError(r, p, &Invocation{RequestID: "a\nb"}, "E", nil, nil) }},
		{"query", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "a?b"}, "", nil) }},
		{"fragment", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "a#b"}, "", nil) }},
		{"percent", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "a%2Fb"}, "", nil) }},
		{"nul", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "a\x00b"}, "", nil) }},
		{"del", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "a\x7fb"}, "", nil) }},
		{"non-ascii", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "caf\xc3\xa9"}, "", nil) }},
		{"too long", func(r *request) error {
			return buildResponse(r, p, &Invocation{RequestID: strings.Repeat("a", 513)}, "", nil)
		}},
		{"nil invocation", func(r *request) error { return buildResponse(r, p, nil, "", nil) }},
		{"invocation ID crlf", func(r *request) error {
			return buildError(r, p, &Invocation{RequestID: "ok", InvocationID: "a\r\nX-Evil: 1"}, "E", nil, nil)
		}},
		{"invocation ID too long", func(r *request) error {
			return buildResponse(r, p, &Invocation{RequestID: "ok", InvocationID: strings.Repeat("a", maxHeadBytes+1)}, "", nil)
		}},
		{"content type crlf", func(r *request) error { return buildResponse(r, p, &Invocation{RequestID: "ok"}, "a\r\nb: c", nil) }},
		{"content type too long", func(r *request) error {
			return buildResponse(r, p, &Invocation{RequestID: "ok"}, strings.Repeat("a", 9000), nil)
		}},
		{"error type lf", func(r *request) error { return buildError(r, p, &Invocation{RequestID: "ok"}, "a\nb", nil, nil) }},
		{"init error type cr", func(r *request) error { return buildInitError(r, p, "a\rb", nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r request
			if err := tt.build(&r); !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestCheckRequestIDAccepts(t *testing.T) {
	for _, id := range []string{testRequestID, "a", "A-z_0.9~", "x:y@z!$&'()*+,;=", strings.Repeat("a", 512)} {
		if err := checkRequestID(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		addr string
		opts []Option
		ok   bool
	}{
		{"ok", "127.0.0.1:9001", nil, true},
		{"ok name", "localhost:9001", nil, true},
		{"ok ipv6", "[::1]:9001", nil, true},
		{"no port", "127.0.0.1", nil, false},
		{"empty port", "127.0.0.1:", nil, false},
		{"empty host", ":9001", nil, false},
		{"crlf", "127.0.0.1:9001\r\nX: y", nil, false},
		{"space", "a b:1", nil, false},
		{"slash", "a/b:1", nil, false},
		{"negative max", testHost, []Option{WithMaxRequestBytes(-1)}, false},
		{"negative timeout", testHost, []Option{withDialTimeout(-1)}, false},
		{"tiny buffer", testHost, []Option{withReadBufferSize(16)}, false},
		{"huge buffer", testHost, []Option{withReadBufferSize(2 << 20)}, false},
		{"all options", testHost, []Option{WithMaxRequestBytes(10), withDialTimeout(1), withReadBufferSize(256), withDialer(nil)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.addr, tt.opts...)
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, ok want %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if c != nil && c.opts.Dial == nil {
				t.Fatal("no default dialer")
			}
		})
	}
}
