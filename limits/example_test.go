package limits_test

import (
	"errors"
	"fmt"

	"github.com/lmigo/lmigo/limits"
)

func ExampleFromEnv() {
	env := map[string]string{
		"AWS_LAMBDA_RUNTIME_API":         "127.0.0.1:9001",
		"AWS_LAMBDA_MAX_CONCURRENCY":     "64",
		"AWS_LAMBDA_INITIALIZATION_TYPE": "lambda-managed-instances",
		"LMIGO_SLOTS":                    "32",
		"LMIGO_BUFFER_RETAIN_BYTES":      "256KiB",
		"AWS_LAMBDA_LOG_LEVEL":           "debug",
	}
	// In a bootstrap: limits.FromEnv(os.LookupEnv).
	c, err := limits.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.MaxConcurrency, c.Slots, c.BufferRetainBytes, c.MaxResponseBytes)
	fmt.Println(c.LogLevel, c.LogFormat, c.ShutdownTimeout)
	// Output:
	// 64 32 262144 6291456
	// DEBUG JSON 500ms
}

func ExampleFromEnv_errors() {
	env := map[string]string{
		"AWS_LAMBDA_MAX_CONCURRENCY": "abc",
		"LMIGO_SHUTDOWN_TIMEOUT":     "0s",
	}
	_, err := limits.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	fmt.Println(err)
	fmt.Println(errors.Is(err, limits.ErrInvalid))
	var ve *limits.VarError
	if errors.As(err, &ve) {
		fmt.Println("first:", ve.Name)
	}
	// Output:
	// AWS_LAMBDA_RUNTIME_API="": required (host:port, e.g. 127.0.0.1:9001)
	// AWS_LAMBDA_MAX_CONCURRENCY="abc": not an integer (1..1600)
	// LMIGO_SHUTDOWN_TIMEOUT="0s": out of range (above 0, at most 10s)
	// true
	// first: AWS_LAMBDA_RUNTIME_API
}

func ExampleVars() {
	for _, v := range limits.Vars()[:4] {
		fmt.Printf("%s (default %q)\n", v.Name, v.Default)
	}
	// Output:
	// AWS_LAMBDA_RUNTIME_API (default "required")
	// AWS_LAMBDA_MAX_CONCURRENCY (default "1")
	// AWS_LAMBDA_INITIALIZATION_TYPE (default "")
	// LMIGO_SLOTS (default "N")
}

func ExampleUnknownVars() {
	// In a bootstrap: limits.UnknownVars(os.Environ()).
	environ := []string{"LMIGO_SLOT=4", "LMIGO_BUFER_RETAIN_BYTES=1MiB", "LMIGO_SIGTERM=on"}
	for _, u := range limits.UnknownVars(environ) {
		fmt.Printf("%s: did you mean %s?\n", u.Name, u.Nearest)
	}
	// Output:
	// LMIGO_SLOT: did you mean LMIGO_SLOTS?
	// LMIGO_BUFER_RETAIN_BYTES: did you mean LMIGO_BUFFER_RETAIN_BYTES?
}
