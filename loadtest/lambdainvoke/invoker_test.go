package lambdainvoke

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

const invokePath = "/2015-03-31/functions/function/invocations"

// answer is one canned HTTP answer of a fake Lambda or emulator.
type answer struct {
	status int
	header map[string]string
	body   string
}

// fakeServer answers every request with a and records what it got.
type fakeServer struct {
	*httptest.Server
	requests atomic.Int32
	last     atomic.Pointer[http.Request]
	lastBody atomic.Pointer[[]byte]
}

func newFakeServer(t *testing.T, a answer) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		b, _ := io.ReadAll(r.Body)
		f.last.Store(r)
		f.lastBody.Store(&b)
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(f.Close)
	return f
}

func newInvoker(t *testing.T, opts Options) *Invoker {
	t.Helper()
	inv, err := New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inv.Close)
	return inv
}

func TestInvokeMapping(t *testing.T) {
	tests := []struct {
		name    string
		answer  answer
		want    Result // Latency ignored
		wantErr string // substring of the error; empty means nil
	}{
		{
			name:   "success",
			answer: answer{200, map[string]string{"Content-Type": "application/json"}, `{"ok":true}`},
			want:   Result{Status: 200, Body: []byte(`{"ok":true}`)},
		},
		{
			name: "Lambda function error",
			answer: answer{200, map[string]string{"X-Amz-Function-Error": "Unhandled", "Content-Type": "application/json"},
				`{"errorMessage":"x","errorType":"Error"}`},
			want: Result{Status: 200, Body: []byte(`{"errorMessage":"x","errorType":"Error"}`), FunctionError: "Unhandled"},
		},
		{
			name: "emulator function error",
			answer: answer{200, map[string]string{ErrorTypeHeader: "Function.Error", "Content-Type": "text/plain"},
				`{"errorMessage":"x","errorType":"Function.Error"}`},
			want: Result{Status: 200, Body: []byte(`{"errorMessage":"x","errorType":"Function.Error"}`), FunctionError: "Function.Error"},
		},
		{
			name: "emulator timeout",
			answer: answer{200, map[string]string{ErrorTypeHeader: "Sandbox.Timedout"},
				`{"errorType":"Sandbox.Timedout","errorMessage":"Task timed out after 1.00 seconds"}`},
			want: Result{Status: 200, Body: []byte(`{"errorType":"Sandbox.Timedout","errorMessage":"Task timed out after 1.00 seconds"}`), FunctionError: "Sandbox.Timedout"},
		},
		{
			name: "emulator throttle",
			answer: answer{400, map[string]string{ErrorTypeHeader: ThrottleErrorType, "Content-Type": "application/json"},
				`{"errorType":"Runtime.Unavailable"}`},
			want: Result{Status: 400, Throttled: true},
		},
		{
			name: "Lambda throttle",
			answer: answer{429, map[string]string{"X-Amzn-ErrorType": "TooManyRequestsException", "Content-Type": "application/json"},
				`{"Reason":"ReservedFunctionConcurrentInvocationLimitExceeded","Type":"User","message":"Rate Exceeded."}`},
			want: Result{Status: 429, Throttled: true},
		},
		{
			name:   "Lambda throttle without error type",
			answer: answer{429, nil, ``},
			want:   Result{Status: 429, Throttled: true},
		},
		{
			name: "emulator refusal",
			answer: answer{400, map[string]string{ErrorTypeHeader: "Client.DuplicatedInvokeId", "Content-Type": "application/json"},
				`{"errorType":"Client.DuplicatedInvokeId"}`},
			want:    Result{Status: 400},
			wantErr: "Client.DuplicatedInvokeId",
		},
		{
			name: "Lambda service error is not retried",
			answer: answer{500, map[string]string{"X-Amzn-ErrorType": "ServiceException", "Content-Type": "application/json"},
				`{"message":"boom"}`},
			want:    Result{Status: 500},
			wantErr: "ServiceException",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.answer)
			inv := newInvoker(t, Options{FunctionName: "function", Endpoint: srv.URL, Static: true})
			payload := []byte(`{"id":1}`)
			got, err := inv.Invoke(t.Context(), payload)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
			}
			if got.Status != tt.want.Status || !bytes.Equal(got.Body, tt.want.Body) ||
				got.FunctionError != tt.want.FunctionError || got.Throttled != tt.want.Throttled {
				t.Errorf("got %+v (body %q), want %+v (body %q)", got, got.Body, tt.want, tt.want.Body)
			}
			if got.Latency <= 0 {
				t.Errorf("Latency = %v, want > 0", got.Latency)
			}
			if n := srv.requests.Load(); n != 1 {
				t.Errorf("server got %d requests, want exactly 1 (no retries)", n)
			}
			r := srv.last.Load()
			if r.Method != http.MethodPost || r.URL.Path != invokePath {
				t.Errorf("request %s %s, want POST %s", r.Method, r.URL.Path, invokePath)
			}
			if it := r.Header.Get("X-Amz-Invocation-Type"); it != "RequestResponse" {
				t.Errorf("X-Amz-Invocation-Type = %q, want RequestResponse", it)
			}
			if b := *srv.lastBody.Load(); !bytes.Equal(b, payload) {
				t.Errorf("request body %q, want %q", b, payload)
			}
		})
	}
}

func TestQualifierAndRegion(t *testing.T) {
	srv := newFakeServer(t, answer{200, nil, `{}`})
	inv := newInvoker(t, Options{FunctionName: "my-fn", Qualifier: "live", Region: "eu-west-1", Endpoint: srv.URL, Static: true})
	if _, err := inv.Invoke(t.Context(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	r := srv.last.Load()
	if r.URL.Path != "/2015-03-31/functions/my-fn/invocations" || r.URL.Query().Get("Qualifier") != "live" {
		t.Errorf("request URL %s, want my-fn with Qualifier=live", r.URL)
	}
	if auth := r.Header.Get("Authorization"); !strings.Contains(auth, "/eu-west-1/lambda/") || !strings.Contains(auth, "Credential="+staticAccessKey+"/") {
		t.Errorf("Authorization %q, want static credentials signed for eu-west-1", auth)
	}
}

// isolateAWSConfig points the default config chain at nothing on this
// machine: no shared files, no IMDS.
func isolateAWSConfig(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE":             dir + "/config",
		"AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_PROFILE":                 "",
		"AWS_REGION":                  "",
		"AWS_DEFAULT_REGION":          "",
		"AWS_ACCESS_KEY_ID":           "",
		"AWS_SECRET_ACCESS_KEY":       "",
		"AWS_SESSION_TOKEN":           "",
	} {
		t.Setenv(k, v)
	}
}

func TestDefaultConfig(t *testing.T) {
	isolateAWSConfig(t)
	t.Setenv("AWS_REGION", "ap-southeast-2")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	srv := newFakeServer(t, answer{200, nil, `{}`})
	inv := newInvoker(t, Options{FunctionName: "function", Endpoint: srv.URL})
	if _, err := inv.Invoke(t.Context(), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	auth := srv.last.Load().Header.Get("Authorization")
	if !strings.Contains(auth, "Credential=AKIDFROMENV/") || !strings.Contains(auth, "/ap-southeast-2/lambda/") {
		t.Errorf("Authorization %q, want the environment's key and region", auth)
	}
}

func TestNewErrors(t *testing.T) {
	isolateAWSConfig(t)
	tests := []struct {
		name string
		opts Options
		want error
	}{
		{"no function", Options{Static: true}, ErrNoFunction},
		{"no region", Options{FunctionName: "f"}, ErrNoRegion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := New(t.Context(), tt.opts)
			if !errors.Is(err, tt.want) {
				if inv != nil {
					inv.Close()
				}
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestInvokeCanceled(t *testing.T) {
	srv := newFakeServer(t, answer{200, nil, `{}`})
	inv := newInvoker(t, Options{FunctionName: "function", Endpoint: srv.URL, Static: true})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r, err := inv.Invoke(ctx, []byte(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if r.Status != 0 || r.Throttled {
		t.Errorf("result %+v, want no status and no throttle", r)
	}
}
