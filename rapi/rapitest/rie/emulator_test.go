package rie

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func invokeCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(tb.Context(), 10*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

func TestInvokeEcho(t *testing.T) {
	t.Parallel()
	e := StartT(t, Options{Bootstrap: echoBootstrap(t), MaxConcurrency: 4, Timeout: 5 * time.Second})
	tests := []struct {
		name    string
		payload string
	}{
		{"object", `{"a":1,"b":[true,null]}`},
		{"string", `"hello"`},
		{"array", `[1,2,3]`},
		{"empty object", `{}`},
		{"unicode", `{"s":"żółw 🐢"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := e.Invoke(invokeCtx(t), []byte(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			if !r.OK() || r.Throttled || string(r.Body) != tt.payload {
				t.Fatalf("got status %d, error type %q, body %s; want 200 and %s", r.Status, r.FunctionError, r.Body, tt.payload)
			}
		})
	}
}

func TestFunctionError(t *testing.T) {
	t.Parallel()
	e := StartT(t, Options{Bootstrap: echoBootstrap(t), MaxConcurrency: 4})
	ctx := invokeCtx(t)
	r, err := e.Invoke(ctx, []byte(`{"fail":"boom"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusOK || r.FunctionError == "" || r.Throttled || r.OK() {
		t.Fatalf("got status %d, error type %q; want 200 with an error type", r.Status, r.FunctionError)
	}
	var doc struct{ ErrorMessage, ErrorType string }
	if err := json.Unmarshal(r.Body, &doc); err != nil || doc.ErrorMessage != "boom" {
		t.Fatalf("error body %s (%v); want errorMessage boom", r.Body, err)
	}
	t.Logf("function error: status %d, %s: %q, body %s", r.Status, ErrorTypeHeader, r.FunctionError, r.Body)

	// The runtime survives a function error.
	r, err = e.Invoke(ctx, []byte(`{"after":"error"}`))
	if err != nil || !r.OK() {
		t.Fatalf("invoke after a function error: %+v, %v", r, err)
	}
}

func TestRuntimeEnvironment(t *testing.T) {
	t.Parallel()
	e := StartT(t, Options{
		Bootstrap:      echoBootstrap(t),
		MaxConcurrency: 3,
		Env: []string{
			"LMIGO_PROBE=first",
			"LMIGO_PROBE=second", // later pairs win
			"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024",
			"_LMIGO_UNDERSCORE=dropped",
		},
	})
	names := []string{
		"LMIGO_PROBE", "AWS_LAMBDA_MAX_CONCURRENCY", "AWS_LAMBDA_INITIALIZATION_TYPE",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_RUNTIME_API", "_LMIGO_UNDERSCORE", "HOME",
	}
	payload, _ := json.Marshal(map[string][]string{"env": names})
	r, err := e.Invoke(invokeCtx(t), payload)
	if err != nil || !r.OK() {
		t.Fatalf("invoke: %+v, %v", r, err)
	}
	var got map[string]string
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	want := map[string]string{
		"LMIGO_PROBE":                     "second",
		"AWS_LAMBDA_MAX_CONCURRENCY":      "3",
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "lambda-managed-instances",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
		"AWS_LAMBDA_RUNTIME_API":          e.RuntimeAPI(),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"_LMIGO_UNDERSCORE", "HOME"} {
		if v, ok := got[k]; ok {
			t.Errorf("%s = %q reached the runtime, want it absent", k, v)
		}
	}
}

func TestStopLeavesNothing(t *testing.T) {
	t.Parallel()
	e := StartT(t, Options{Bootstrap: echoBootstrap(t), MaxConcurrency: 4})
	if r, err := e.Invoke(invokeCtx(t), []byte(`1`)); err != nil || !r.OK() {
		t.Fatalf("invoke: %+v, %v", r, err)
	}

	procs := e.Processes()
	var boot *Process
	for i, p := range procs {
		// With Options.Exec the runtime is the Exec command running it.
		if slices.Contains(p.Args, "/var/task/bootstrap") {
			boot = &procs[i]
		}
	}
	if boot == nil {
		t.Fatalf("no /var/task/bootstrap among the namespace's processes: %s", describe(procs))
	}
	if boot.UID != 993 {
		t.Errorf("bootstrap runs as uid %d, want 993", boot.UID)
	}
	if err := e.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	for _, p := range procs {
		if p.alive() {
			t.Errorf("process %d %q still alive after Stop", p.PID, strings.Join(p.Args, " "))
		}
	}
	if _, err := os.Stat("/proc/" + itoa(boot.PID)); err == nil {
		if p, err := readStat(boot.PID); err == nil && p.start == boot.Start {
			t.Errorf("bootstrap %d still in /proc", boot.PID)
		}
	}
	if ps := e.Processes(); len(ps) != 0 {
		t.Errorf("Processes after Stop = %s", describe(ps))
	}
	if err := e.Stop(); err != nil {
		t.Errorf("second Stop = %v, want nil", err)
	}
	if _, err := e.Invoke(invokeCtx(t), []byte(`1`)); !errors.Is(err, ErrStopped) {
		t.Errorf("Invoke after Stop = %v, want ErrStopped", err)
	}
	if _, err := os.Stat("/var/task/bootstrap"); err == nil {
		t.Errorf("/var/task/bootstrap exists on the host")
	}
}

func TestRuntimeExit(t *testing.T) {
	t.Parallel()
	e := StartT(t, Options{Bootstrap: echoBootstrap(t), MaxConcurrency: 2})
	r, err := e.Invoke(invokeCtx(t), []byte(`{"exit":3}`))
	t.Logf("invoke that exits the runtime: status %d, %s: %q, body %s, err %v", r.Status, ErrorTypeHeader, r.FunctionError, r.Body, err)
	if err == nil && r.OK() {
		t.Fatalf("invoke that exits the runtime succeeded: %+v", r)
	}
	select {
	case <-e.Done():
		err := e.Stop()
		if !errors.Is(err, ErrExited) {
			t.Errorf("Stop after the runtime exited = %v, want ErrExited", err)
		}
		t.Logf("Stop: %v", err)
	case <-time.After(10 * time.Second):
		t.Log("the emulator kept running after the runtime exited")
	}
}

func TestInitFailure(t *testing.T) {
	t.Parallel()
	// A bootstrap that exits at once never polls /next.
	script := filepath.Join(t.TempDir(), "bootstrap")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho init-failure-marker\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := invokeCtx(t)
	e, err := Start(ctx, Options{Bootstrap: script, MaxConcurrency: 2, Timeout: 3 * time.Second})
	if errors.Is(err, ErrUnsupported) {
		t.Skip(err)
	}
	if err == nil {
		_ = e.Stop()
		t.Fatal("Start succeeded with a bootstrap that exits")
	}
	if !errors.Is(err, ErrInit) {
		t.Fatalf("Start = %v, want ErrInit", err)
	}
	t.Logf("init failure: %v", err)
}

func TestStartOptionErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name string
		opts Options
		want error
	}{
		{"no bootstrap", Options{}, ErrOptions},
		{"bootstrap is a directory", Options{Bootstrap: dir}, ErrOptions},
		{"bootstrap missing", Options{Bootstrap: filepath.Join(dir, "missing")}, ErrOptions},
		{"emulator under /var", Options{Bootstrap: "/bin/sh", Emulator: "/var/lib/aws-lambda-rie"}, ErrOptions},
		{"emulator missing", Options{Bootstrap: "/bin/sh", Emulator: filepath.Join(dir, "missing")}, ErrOptions},
		{"exec missing", Options{Bootstrap: "/bin/sh", Exec: []string{filepath.Join(dir, "missing")}}, ErrOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Start(t.Context(), tt.opts)
			if e != nil {
				_ = e.Stop()
			}
			if errors.Is(err, ErrUnsupported) {
				t.Skip(err)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Start = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestBinary(t *testing.T) {
	t.Parallel()
	p, err := Binary()
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("Binary = %v, want ErrNotFound", err)
		}
		t.Skip(err)
	}
	if !filepath.IsAbs(p) || !isExecutable(p) {
		t.Fatalf("Binary = %q, want an absolute path to an executable", p)
	}
}
