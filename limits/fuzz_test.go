package limits

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzFromEnv feeds arbitrary values: FromEnv must never panic, and must
// return either a Config within its documented bounds or an error made
// only of *VarError values wrapping ErrInvalid.
func FuzzFromEnv(f *testing.F) {
	seeds := [][10]string{
		{testAPI, "", "", "", "", "", "", "", "", ""},
		{testAPI, "64", "8", "256KiB", "6MiB", "1MB", "2048", "debug", "json", "2s"},
		{testAPI, "1600", "1600", "64MiB", "6291556", "6291556", "1048576", "FATAL", "TEXT", "10s"},
		{"[::1]:9001", "-5", "1", "0", "1", "1", "1", "trace", "Json", "1ns"},
		{"", "abc", "0", "-1", "0", "7MiB", "0", "loud", "xml", "0s"},
		{"host", "1601", "99999999999999999999", "99999999999999999999MiB", "1.5KiB", " 1 kib ", "-1", "", "", "500"},
	}
	metrics := [][2]string{{"", ""}, {"emf", "10s"}, {"EMF", "1h"}, {"off", "1s"}, {"x", "0s"}, {"", "999ms"}}
	sigterm := []string{"", "1", "TRUE", "off", "yes", " on "}
	fraction := []string{"", "0.85", "1", "off", "1e-1", ".09"}
	for i, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], "lambda-managed-instances", metrics[i][0], metrics[i][1], sigterm[i], fraction[i])
	}
	f.Fuzz(func(t *testing.T, api, n, slots, retain, req, resp, mem, level, format, shutdown, initType, metrics, interval, sigterm, fraction string) {
		env := map[string]string{
			envRuntimeAPI:          api,
			envMaxConcurrency:      n,
			envSlots:               slots,
			envBufferRetain:        retain,
			envMaxRequest:          req,
			envMaxResponse:         resp,
			envMemorySize:          mem,
			envLogLevel:            level,
			envLogFormat:           format,
			envShutdownTimeout:     shutdown,
			envInitType:            initType,
			envMetrics:             metrics,
			envMetricsInterval:     interval,
			envSIGTERM:             sigterm,
			envMemoryLimitFraction: fraction,
			envFunctionName:        api,
		}
		c, err := FromEnv(mapEnv(env))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			for _, ve := range varErrors(t, err) {
				if _, known := env[ve.Name]; !known || ve.Value != env[ve.Name] || ve.Reason == "" {
					t.Fatalf("bad VarError %+v", ve)
				}
			}
			if c != (Config{}) {
				t.Fatalf("non-zero Config with error: %+v", c)
			}
			_ = err.Error()
			return
		}
		switch {
		case c.RuntimeAPI == "":
			t.Fatal("empty RuntimeAPI")
		case c.Slots < 1 || c.Slots > c.MaxConcurrency || c.MaxConcurrency > maxConcurrencyLimit:
			t.Fatalf("Slots %d, MaxConcurrency %d out of bounds", c.Slots, c.MaxConcurrency)
		case c.BufferRetainBytes < 0 || c.BufferRetainBytes > maxBufferRetain:
			t.Fatalf("BufferRetainBytes %d", c.BufferRetainBytes)
		case c.MaxRequestBytes < 1 || c.MaxRequestBytes > maxPayload:
			t.Fatalf("MaxRequestBytes %d", c.MaxRequestBytes)
		case c.MaxResponseBytes < 1 || c.MaxResponseBytes > maxPayload:
			t.Fatalf("MaxResponseBytes %d", c.MaxResponseBytes)
		case c.MemoryMB < 0 || c.MemoryMB > maxMemoryMB:
			t.Fatalf("MemoryMB %d", c.MemoryMB)
		case c.MemoryLimitFraction != 0 && (c.MemoryLimitFraction < 0.1 || c.MemoryLimitFraction > 1) ||
			c.MemoryLimitFraction != c.MemoryLimitFraction: // NaN
			t.Fatalf("MemoryLimitFraction %v", c.MemoryLimitFraction)
		case c.GOMEMLIMITSet:
			t.Fatal("GOMEMLIMITSet without GOMEMLIMIT")
		case c.LogLevel < LevelTrace || c.LogLevel > LevelFatal:
			t.Fatalf("LogLevel %d", c.LogLevel)
		case c.LogFormat != FormatJSON && c.LogFormat != FormatText:
			t.Fatalf("LogFormat %d", c.LogFormat)
		case c.ShutdownTimeout <= 0 || c.ShutdownTimeout > 10*time.Second:
			t.Fatalf("ShutdownTimeout %v", c.ShutdownTimeout)
		case c.Metrics != MetricsOff && c.Metrics != MetricsEMF:
			t.Fatalf("Metrics %d", c.Metrics)
		case c.MetricsInterval < time.Second || c.MetricsInterval > time.Hour:
			t.Fatalf("MetricsInterval %v", c.MetricsInterval)
		case c.SIGTERM != slices.Contains([]string{"1", "true", "on"}, strings.ToLower(strings.TrimSpace(sigterm))):
			t.Fatalf("SIGTERM %v for %q", c.SIGTERM, sigterm)
		case c.ManagedInstances != (strings.TrimSpace(initType) == initTypeLMI):
			t.Fatalf("ManagedInstances %v for %q", c.ManagedInstances, initType)
		}
	})
}
