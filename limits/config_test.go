package limits

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testAPI = "127.0.0.1:9001"

// mapEnv is a lookup over m, standing in for os.LookupEnv.
func mapEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// withAPI returns m plus the one required variable, unless m sets it.
func withAPI(m map[string]string) map[string]string {
	out := map[string]string{envRuntimeAPI: testAPI}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// defaults is the Config of an environment holding only the Runtime API.
func defaults() Config {
	return Config{
		RuntimeAPI:          testAPI,
		MaxConcurrency:      1,
		Slots:               1,
		BufferRetainBytes:   2 << 20,
		MaxRequestBytes:     6<<20 + 100,
		MaxResponseBytes:    6 << 20,
		MemoryLimitFraction: 0.9,
		LogLevel:            LevelInfo,
		LogFormat:           FormatText,
		ShutdownTimeout:     500 * time.Millisecond,
		OverrunGrace:        500 * time.Millisecond,
		MaxOverruns:         1,
		WedgedExit:          10 * time.Second,
		MetricsInterval:     60 * time.Second,
		Labels:              true,
	}
}

// varErrors flattens err into its *VarError parts, failing on anything else.
func varErrors(t *testing.T, err error) []*VarError {
	t.Helper()
	errs := []error{err}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	out := make([]*VarError, 0, len(errs))
	for _, e := range errs {
		var ve *VarError
		if !errors.As(e, &ve) || ve.Error() != e.Error() {
			t.Fatalf("error part %T %q is not a *VarError", e, e)
		}
		out = append(out, ve)
	}
	return out
}

func TestFromEnvGood(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want func(c *Config)
	}{
		{"defaults", nil, func(c *Config) {}},
		{"runtime api trimmed", map[string]string{envRuntimeAPI: "  localhost:9001\t"}, func(c *Config) { c.RuntimeAPI = "localhost:9001" }},
		{"runtime api ipv6", map[string]string{envRuntimeAPI: "[::1]:9001"}, func(c *Config) { c.RuntimeAPI = "[::1]:9001" }},

		{"concurrency empty", map[string]string{envMaxConcurrency: ""}, func(c *Config) {}},
		{"concurrency spaces", map[string]string{envMaxConcurrency: "   "}, func(c *Config) {}},
		{"concurrency 1", map[string]string{envMaxConcurrency: "1"}, func(c *Config) {}},
		{"concurrency 0 means 1", map[string]string{envMaxConcurrency: "0"}, func(c *Config) {}},
		{"concurrency negative means 1", map[string]string{envMaxConcurrency: "-7"}, func(c *Config) {}},
		{"concurrency huge negative means 1", map[string]string{envMaxConcurrency: "-99999999999999999999999"}, func(c *Config) {}},
		{"concurrency 64 sets slots", map[string]string{envMaxConcurrency: " 64 "}, func(c *Config) { c.MaxConcurrency, c.Slots = 64, 64 }},
		{"concurrency 1600", map[string]string{envMaxConcurrency: "1600"}, func(c *Config) { c.MaxConcurrency, c.Slots = 1600, 1600 }},

		{"lmi", map[string]string{envInitType: "lambda-managed-instances"}, func(c *Config) { c.ManagedInstances, c.LogFormat = true, FormatJSON }},
		{"on-demand", map[string]string{envInitType: "on-demand"}, func(c *Config) {}},

		{"slots lower", map[string]string{envMaxConcurrency: "8", envSlots: "3"}, func(c *Config) { c.MaxConcurrency, c.Slots = 8, 3 }},
		{"slots equal", map[string]string{envMaxConcurrency: "8", envSlots: "8"}, func(c *Config) { c.MaxConcurrency, c.Slots = 8, 8 }},
		{"slots empty", map[string]string{envMaxConcurrency: "8", envSlots: " "}, func(c *Config) { c.MaxConcurrency, c.Slots = 8, 8 }},
		{"old name alone", map[string]string{envMaxConcurrency: "8", envSlotsOld: "3"}, func(c *Config) { c.MaxConcurrency, c.Slots = 8, 3 }},
		{"old name the same", map[string]string{envMaxConcurrency: "8", envSlots: "3", envSlotsOld: " 3 "}, func(c *Config) { c.MaxConcurrency, c.Slots = 8, 3 }},
		{"old name empty", map[string]string{envMaxConcurrency: "8", envSlots: "3", envSlotsOld: " "}, func(c *Config) { c.MaxConcurrency, c.Slots = 8, 3 }},

		{"retain bytes", map[string]string{envBufferRetain: "4096"}, func(c *Config) { c.BufferRetainBytes = 4096 }},
		{"retain zero", map[string]string{envBufferRetain: "0"}, func(c *Config) { c.BufferRetainBytes = 0 }},
		{"retain KiB", map[string]string{envBufferRetain: "64KiB"}, func(c *Config) { c.BufferRetainBytes = 64 << 10 }},
		{"retain kib lower", map[string]string{envBufferRetain: "64kib"}, func(c *Config) { c.BufferRetainBytes = 64 << 10 }},
		{"retain MiB spaced", map[string]string{envBufferRetain: " 2 MiB "}, func(c *Config) { c.BufferRetainBytes = 2 << 20 }},
		{"retain KB", map[string]string{envBufferRetain: "3KB"}, func(c *Config) { c.BufferRetainBytes = 3000 }},
		{"retain MB", map[string]string{envBufferRetain: "5mb"}, func(c *Config) { c.BufferRetainBytes = 5000000 }},
		{"retain max", map[string]string{envBufferRetain: "64MiB"}, func(c *Config) { c.BufferRetainBytes = 64 << 20 }},

		{"request 1", map[string]string{envMaxRequest: "1"}, func(c *Config) { c.MaxRequestBytes = 1 }},
		{"request max", map[string]string{envMaxRequest: "6291556"}, func(c *Config) { c.MaxRequestBytes = 6<<20 + 100 }},
		{"request MiB", map[string]string{envMaxRequest: "6MiB"}, func(c *Config) { c.MaxRequestBytes = 6 << 20 }},
		{"response KiB", map[string]string{envMaxResponse: "256KiB"}, func(c *Config) { c.MaxResponseBytes = 256 << 10 }},
		{"response MB", map[string]string{envMaxResponse: "6MB"}, func(c *Config) { c.MaxResponseBytes = 6000000 }},
		{"response max", map[string]string{envMaxResponse: "6291556"}, func(c *Config) { c.MaxResponseBytes = 6291556 }},

		{"memory", map[string]string{envMemorySize: "2048"}, func(c *Config) { c.MemoryMB = 2048 }},
		{"memory max", map[string]string{envMemorySize: "1048576"}, func(c *Config) { c.MemoryMB = 1 << 20 }},

		{"memory fraction", map[string]string{envMemoryLimitFraction: "0.85"}, func(c *Config) { c.MemoryLimitFraction = 0.85 }},
		{"memory fraction spaced", map[string]string{envMemoryLimitFraction: " .5 "}, func(c *Config) { c.MemoryLimitFraction = 0.5 }},
		{"memory fraction min", map[string]string{envMemoryLimitFraction: "0.1"}, func(c *Config) { c.MemoryLimitFraction = 0.1 }},
		{"memory fraction 1", map[string]string{envMemoryLimitFraction: "1"}, func(c *Config) { c.MemoryLimitFraction = 1 }},
		{"memory fraction 1.0", map[string]string{envMemoryLimitFraction: "1.0"}, func(c *Config) { c.MemoryLimitFraction = 1 }},
		{"memory fraction 0 is off", map[string]string{envMemoryLimitFraction: "0"}, func(c *Config) { c.MemoryLimitFraction = 0 }},
		{"memory fraction 0.0 is off", map[string]string{envMemoryLimitFraction: "0.0"}, func(c *Config) { c.MemoryLimitFraction = 0 }},
		{"memory fraction off", map[string]string{envMemoryLimitFraction: "OFF"}, func(c *Config) { c.MemoryLimitFraction = 0 }},
		{"memory fraction empty", map[string]string{envMemoryLimitFraction: " "}, func(c *Config) {}},
		{"gomemlimit set", map[string]string{envGOMEMLIMIT: "512MiB"}, func(c *Config) { c.GOMEMLIMITSet = true }},
		{"gomemlimit set empty", map[string]string{envGOMEMLIMIT: ""}, func(c *Config) { c.GOMEMLIMITSet = true }},
		{"gomemlimit off", map[string]string{envGOMEMLIMIT: "off", envMemorySize: "128"}, func(c *Config) { c.GOMEMLIMITSet, c.MemoryMB = true, 128 }},

		{"level trace", map[string]string{envLogLevel: "TRACE"}, func(c *Config) { c.LogLevel = LevelTrace }},
		{"level debug lower", map[string]string{envLogLevel: "debug"}, func(c *Config) { c.LogLevel = LevelDebug }},
		{"level info mixed", map[string]string{envLogLevel: " Info "}, func(c *Config) { c.LogLevel = LevelInfo }},
		{"level warn", map[string]string{envLogLevel: "WARN"}, func(c *Config) { c.LogLevel = LevelWarn }},
		{"level error", map[string]string{envLogLevel: "error"}, func(c *Config) { c.LogLevel = LevelError }},
		{"level fatal", map[string]string{envLogLevel: "FATAL"}, func(c *Config) { c.LogLevel = LevelFatal }},

		{"format json", map[string]string{envLogFormat: "json"}, func(c *Config) { c.LogFormat = FormatJSON }},
		{"format text", map[string]string{envLogFormat: "TEXT"}, func(c *Config) { c.LogFormat = FormatText }},
		{"format text on lmi", map[string]string{envInitType: "lambda-managed-instances", envLogFormat: "Text"}, func(c *Config) { c.ManagedInstances, c.LogFormat = true, FormatText }},

		{"shutdown", map[string]string{envShutdownTimeout: "2s"}, func(c *Config) { c.ShutdownTimeout = 2 * time.Second }},
		{"shutdown max", map[string]string{envShutdownTimeout: "10s"}, func(c *Config) { c.ShutdownTimeout = 10 * time.Second }},
		{"shutdown tiny", map[string]string{envShutdownTimeout: "1ns"}, func(c *Config) { c.ShutdownTimeout = 1 }},

		{"overrun grace", map[string]string{envOverrunGrace: "2s"}, func(c *Config) { c.OverrunGrace = 2 * time.Second }},
		{"overrun grace max", map[string]string{envOverrunGrace: "1h"}, func(c *Config) { c.OverrunGrace = time.Hour }},
		{"max overruns", map[string]string{envMaxConcurrency: "64", envSlots: "8", envMaxOverruns: "100"}, func(c *Config) { c.MaxConcurrency, c.Slots, c.MaxOverruns = 64, 8, 100 }},
		{"max overruns 0", map[string]string{envMaxOverruns: "0"}, func(c *Config) { c.MaxOverruns = 0 }},
		{"max overruns above N", map[string]string{envMaxOverruns: "16000"}, func(c *Config) { c.MaxOverruns = 16000 }},
		{"wedged exit", map[string]string{envWedgedExit: "1m"}, func(c *Config) { c.WedgedExit = time.Minute }},
		{"wedged exit off", map[string]string{envWedgedExit: "Off"}, func(c *Config) { c.WedgedExit = 0 }},
		{"wedged exit 0", map[string]string{envWedgedExit: "0"}, func(c *Config) { c.WedgedExit = 0 }},

		{"metrics emf", map[string]string{envMetrics: "emf"}, func(c *Config) { c.Metrics = MetricsEMF }},
		{"metrics EMF spaced", map[string]string{envMetrics: " EMF "}, func(c *Config) { c.Metrics = MetricsEMF }},
		{"metrics off", map[string]string{envMetrics: "Off"}, func(c *Config) {}},
		{"metrics empty", map[string]string{envMetrics: ""}, func(c *Config) {}},
		{"metrics interval", map[string]string{envMetrics: "emf", envMetricsInterval: "10s"}, func(c *Config) { c.Metrics, c.MetricsInterval = MetricsEMF, 10*time.Second }},
		{"metrics interval min", map[string]string{envMetricsInterval: "1s"}, func(c *Config) { c.MetricsInterval = time.Second }},
		{"metrics interval max", map[string]string{envMetricsInterval: "1h"}, func(c *Config) { c.MetricsInterval = time.Hour }},
		{"metrics interval minutes", map[string]string{envMetricsInterval: "5m"}, func(c *Config) { c.MetricsInterval = 5 * time.Minute }},
		{"sigterm 1", map[string]string{envSIGTERM: "1"}, func(c *Config) { c.SIGTERM = true }},
		{"sigterm TRUE", map[string]string{envSIGTERM: " TRUE "}, func(c *Config) { c.SIGTERM = true }},
		{"sigterm on", map[string]string{envSIGTERM: "on"}, func(c *Config) { c.SIGTERM = true }},
		{"sigterm off", map[string]string{envSIGTERM: "Off"}, func(c *Config) {}},
		{"sigterm 0", map[string]string{envSIGTERM: "0"}, func(c *Config) {}},
		{"sigterm empty", map[string]string{envSIGTERM: ""}, func(c *Config) {}},
		{"report on", map[string]string{envReport: " On "}, func(c *Config) { c.Report = true }},
		{"report 1", map[string]string{envReport: "1"}, func(c *Config) { c.Report = true }},
		{"report off", map[string]string{envReport: "off"}, func(c *Config) {}},
		{"labels off", map[string]string{envLabels: "OFF"}, func(c *Config) { c.Labels = false }},
		{"labels 0", map[string]string{envLabels: "0"}, func(c *Config) { c.Labels = false }},
		{"labels on", map[string]string{envLabels: "true"}, func(c *Config) {}},
		{"labels empty", map[string]string{envLabels: " "}, func(c *Config) {}},
		{"json codec Sonic", map[string]string{envJSONCodec: " Sonic "}, func(c *Config) { c.JSONCodec = "sonic" }},
		{"json codec std", map[string]string{envJSONCodec: "std"}, func(c *Config) { c.JSONCodec = "std" }},
		{"json codec empty", map[string]string{envJSONCodec: ""}, func(c *Config) {}},
		{"metrics namespace", map[string]string{envMetricsNamespace: " Shop/Orders "}, func(c *Config) { c.MetricsNamespace = "Shop/Orders" }},
		{"metrics namespace 255", map[string]string{envMetricsNamespace: strings.Repeat("n", 255)}, func(c *Config) { c.MetricsNamespace = strings.Repeat("n", 255) }},
		{"service name", map[string]string{envServiceName: "payment"}, func(c *Config) { c.ServiceName = "payment" }},
		{"metrics disabled True", map[string]string{envMetricsDisabled: " True "}, func(c *Config) { c.MetricsDisabled = true }},
		{"metrics disabled yes", map[string]string{envMetricsDisabled: "yes"}, func(c *Config) { c.MetricsDisabled = true }},
		{"metrics disabled 1", map[string]string{envMetricsDisabled: "1"}, func(c *Config) { c.MetricsDisabled = true }},
		{"metrics disabled false", map[string]string{envMetricsDisabled: "false"}, func(c *Config) {}},
		{"metrics disabled N", map[string]string{envMetricsDisabled: "N"}, func(c *Config) {}},

		{"function name", map[string]string{envFunctionName: " fn "}, func(c *Config) { c.FunctionName = "fn" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := FromEnv(mapEnv(withAPI(tt.env)))
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			want := defaults()
			tt.want(&want)
			if _, set := tt.env[envMaxOverruns]; !set {
				want.MaxOverruns = want.Slots // its default follows the slots
			}
			if got != want {
				t.Errorf("FromEnv =\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

func TestFromEnvBad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		env    map[string]string
		bad    string // the one variable reported
		value  string // the raw value reported
		reason string // part of the reason
	}{
		{"api unset", map[string]string{envRuntimeAPI: ""}, envRuntimeAPI, "", "required"},
		{"api spaces", map[string]string{envRuntimeAPI: "  "}, envRuntimeAPI, "  ", "required"},
		{"api no port", map[string]string{envRuntimeAPI: "127.0.0.1"}, envRuntimeAPI, "127.0.0.1", "host:port"},
		{"api url", map[string]string{envRuntimeAPI: "http://127.0.0.1:9001"}, envRuntimeAPI, "http://127.0.0.1:9001", "host:port"},
		{"api empty host", map[string]string{envRuntimeAPI: ":9001"}, envRuntimeAPI, ":9001", "host:port"},
		{"api header injection", map[string]string{envRuntimeAPI: "a\r\nX: y:9001"}, envRuntimeAPI, "a\r\nX: y:9001", "host:port"},
		{"api port 0", map[string]string{envRuntimeAPI: "127.0.0.1:0"}, envRuntimeAPI, "127.0.0.1:0", "1..65535"},
		{"api port big", map[string]string{envRuntimeAPI: "127.0.0.1:65536"}, envRuntimeAPI, "127.0.0.1:65536", "1..65535"},
		{"api port name", map[string]string{envRuntimeAPI: "127.0.0.1:http"}, envRuntimeAPI, "127.0.0.1:http", "1..65535"},
		{"api port plus", map[string]string{envRuntimeAPI: "127.0.0.1:+80"}, envRuntimeAPI, "127.0.0.1:+80", "1..65535"},

		{"concurrency word", map[string]string{envMaxConcurrency: "abc"}, envMaxConcurrency, "abc", "not an integer (1..1600)"},
		{"concurrency float", map[string]string{envMaxConcurrency: "1.5"}, envMaxConcurrency, "1.5", "not an integer"},
		{"concurrency 1601", map[string]string{envMaxConcurrency: "1601"}, envMaxConcurrency, "1601", "out of range (1..1600)"},
		{"concurrency huge", map[string]string{envMaxConcurrency: "99999999999999999999999"}, envMaxConcurrency, "99999999999999999999999", "out of range"},

		{"slots word", map[string]string{envSlots: "many"}, envSlots, "many", "not an integer (1..1,"},
		{"slots 0", map[string]string{envMaxConcurrency: "4", envSlots: "0"}, envSlots, "0", "out of range (1..4,"},
		{"slots negative", map[string]string{envMaxConcurrency: "4", envSlots: "-1"}, envSlots, "-1", "out of range (1..4,"},
		{"slots above N", map[string]string{envMaxConcurrency: "4", envSlots: "5"}, envSlots, "5", "out of range (1..4, at most AWS_LAMBDA_MAX_CONCURRENCY)"},
		{"slots above default N", map[string]string{envSlots: "2"}, envSlots, "2", "out of range (1..1,"},
		{"slots huge", map[string]string{envSlots: "99999999999999999999999"}, envSlots, "99999999999999999999999", "out of range"},
		{"old name word", map[string]string{envSlotsOld: "many"}, envSlotsOld, "many", "not an integer (1..1,"},
		{"old name above N", map[string]string{envMaxConcurrency: "4", envSlotsOld: "5"}, envSlotsOld, "5", "out of range (1..4,"},
		{"old name differs", map[string]string{envMaxConcurrency: "8", envSlots: "3", envSlotsOld: "4"}, envSlotsOld, "4", "differs from LMIGO_SLOTS=3"},

		{"retain word", map[string]string{envBufferRetain: "lots"}, envBufferRetain, "lots", "not a size"},
		{"retain negative", map[string]string{envBufferRetain: "-1"}, envBufferRetain, "-1", "out of range (0..67108864 bytes)"},
		{"retain minus zero", map[string]string{envBufferRetain: "-0"}, envBufferRetain, "-0", "out of range"},
		{"retain bad unit", map[string]string{envBufferRetain: "1TiB"}, envBufferRetain, "1TiB", "not a size"},
		{"retain unit only", map[string]string{envBufferRetain: "MiB"}, envBufferRetain, "MiB", "not a size"},
		{"retain fraction", map[string]string{envBufferRetain: "1.5"}, envBufferRetain, "1.5", "not a whole number of bytes"},
		{"retain too big", map[string]string{envBufferRetain: "65MiB"}, envBufferRetain, "65MiB", "out of range (0..67108864 bytes)"},
		{"retain overflow", map[string]string{envBufferRetain: "99999999999999999999999MiB"}, envBufferRetain, "99999999999999999999999MiB", "out of range"},
		{"retain overflow after multiply", map[string]string{envBufferRetain: "9223372036854775807KiB"}, envBufferRetain, "9223372036854775807KiB", "out of range"},
		{"request zero", map[string]string{envMaxRequest: "0"}, envMaxRequest, "0", "out of range (1..6291556 bytes)"},
		{"request too big", map[string]string{envMaxRequest: "6291557"}, envMaxRequest, "6291557", "out of range (1..6291556 bytes)"},
		{"request 7MiB", map[string]string{envMaxRequest: "7MiB"}, envMaxRequest, "7MiB", "out of range"},
		{"response zero", map[string]string{envMaxResponse: "0KiB"}, envMaxResponse, "0KiB", "out of range (1..6291556 bytes)"},
		{"response too big", map[string]string{envMaxResponse: "7MB"}, envMaxResponse, "7MB", "out of range"},
		{"response word", map[string]string{envMaxResponse: "6 M"}, envMaxResponse, "6 M", "not a size"},

		{"memory word", map[string]string{envMemorySize: "big"}, envMemorySize, "big", "not an integer (1..1048576)"},
		{"memory zero", map[string]string{envMemorySize: "0"}, envMemorySize, "0", "out of range (1..1048576)"},
		{"memory negative", map[string]string{envMemorySize: "-128"}, envMemorySize, "-128", "out of range"},
		{"memory too big", map[string]string{envMemorySize: "1048577"}, envMemorySize, "1048577", "out of range"},
		{"memory huge", map[string]string{envMemorySize: "99999999999999999999999"}, envMemorySize, "99999999999999999999999", "out of range"},

		{"memory fraction word", map[string]string{envMemoryLimitFraction: "most"}, envMemoryLimitFraction, "most", "not a decimal fraction (0.1..1, or 0 or off)"},
		{"memory fraction percent", map[string]string{envMemoryLimitFraction: "90%"}, envMemoryLimitFraction, "90%", "not a decimal fraction"},
		{"memory fraction negative", map[string]string{envMemoryLimitFraction: "-0.5"}, envMemoryLimitFraction, "-0.5", "not a decimal fraction"},
		{"memory fraction exponent", map[string]string{envMemoryLimitFraction: "9e-1"}, envMemoryLimitFraction, "9e-1", "not a decimal fraction"},
		{"memory fraction NaN", map[string]string{envMemoryLimitFraction: "NaN"}, envMemoryLimitFraction, "NaN", "not a decimal fraction"},
		{"memory fraction two points", map[string]string{envMemoryLimitFraction: "0.9.1"}, envMemoryLimitFraction, "0.9.1", "not a decimal fraction"},
		{"memory fraction point only", map[string]string{envMemoryLimitFraction: "."}, envMemoryLimitFraction, ".", "not a decimal fraction"},
		{"memory fraction too small", map[string]string{envMemoryLimitFraction: "0.05"}, envMemoryLimitFraction, "0.05", "out of range (0.1..1, or 0 or off)"},
		{"memory fraction above 1", map[string]string{envMemoryLimitFraction: "1.01"}, envMemoryLimitFraction, "1.01", "out of range"},
		{"memory fraction percent number", map[string]string{envMemoryLimitFraction: "90"}, envMemoryLimitFraction, "90", "out of range"},

		{"level unknown", map[string]string{envLogLevel: "VERBOSE"}, envLogLevel, "VERBOSE", "not a log level"},
		{"level warning", map[string]string{envLogLevel: "warning"}, envLogLevel, "warning", "not a log level"},
		{"format unknown", map[string]string{envLogFormat: "yaml"}, envLogFormat, "yaml", "not a log format (JSON, TEXT)"},

		{"shutdown no unit", map[string]string{envShutdownTimeout: "500"}, envShutdownTimeout, "500", "not a Go duration"},
		{"shutdown word", map[string]string{envShutdownTimeout: "soon"}, envShutdownTimeout, "soon", "not a Go duration"},
		{"shutdown zero", map[string]string{envShutdownTimeout: "0s"}, envShutdownTimeout, "0s", "out of range (above 0, at most 10s)"},
		{"shutdown negative", map[string]string{envShutdownTimeout: "-1s"}, envShutdownTimeout, "-1s", "out of range"},
		{"shutdown too long", map[string]string{envShutdownTimeout: "10.001s"}, envShutdownTimeout, "10.001s", "out of range"},
		{"overrun grace zero", map[string]string{envOverrunGrace: "0s"}, envOverrunGrace, "0s", "out of range (above 0, at most 1h0m0s)"},
		{"overrun grace word", map[string]string{envOverrunGrace: "long"}, envOverrunGrace, "long", "not a Go duration"},
		{"max overruns negative", map[string]string{envMaxOverruns: "-1"}, envMaxOverruns, "-1", "out of range (0..16000)"},
		{"max overruns too many", map[string]string{envMaxOverruns: "16001"}, envMaxOverruns, "16001", "out of range (0..16000)"},
		{"max overruns word", map[string]string{envMaxOverruns: "all"}, envMaxOverruns, "all", "not an integer (0..16000)"},
		{"wedged exit word", map[string]string{envWedgedExit: "never"}, envWedgedExit, "never", "not a Go duration"},
		{"wedged exit too long", map[string]string{envWedgedExit: "2h"}, envWedgedExit, "2h", "out of range (above 0, at most 1h0m0s, or 0 or off)"},
		{"wedged exit negative", map[string]string{envWedgedExit: "-1s"}, envWedgedExit, "-1s", "out of range"},

		{"metrics unknown", map[string]string{envMetrics: "prometheus"}, envMetrics, "prometheus", "not a metrics output (OFF, EMF)"},
		{"metrics true", map[string]string{envMetrics: "true"}, envMetrics, "true", "not a metrics output"},
		{"metrics interval no unit", map[string]string{envMetricsInterval: "60"}, envMetricsInterval, "60", "not a Go duration"},
		{"metrics interval too short", map[string]string{envMetricsInterval: "999ms"}, envMetricsInterval, "999ms", "out of range (1s..1h0m0s)"},
		{"metrics interval zero", map[string]string{envMetricsInterval: "0s"}, envMetricsInterval, "0s", "out of range"},
		{"metrics interval negative", map[string]string{envMetricsInterval: "-1m"}, envMetricsInterval, "-1m", "out of range"},
		{"metrics interval too long", map[string]string{envMetricsInterval: "61m"}, envMetricsInterval, "61m", "out of range (1s..1h0m0s)"},
		{"metrics interval bad while off", map[string]string{envMetrics: "off", envMetricsInterval: "often"}, envMetricsInterval, "often", "not a Go duration"},
		{"sigterm yes", map[string]string{envSIGTERM: "yes"}, envSIGTERM, "yes", "not on or off"},
		{"sigterm 2", map[string]string{envSIGTERM: "2"}, envSIGTERM, "2", "not on or off"},
		{"report yes", map[string]string{envReport: "yes"}, envReport, "yes", "not on or off"},
		{"labels cpu", map[string]string{envLabels: "cpu"}, envLabels, "cpu", "not on or off"},
		{"json codec unknown", map[string]string{envJSONCodec: "jsoniter"}, envJSONCodec, "jsoniter", "not a JSON codec (std, jsonv2, goccy, sonic, segmentio)"},
		{"metrics namespace AWS", map[string]string{envMetricsNamespace: "AWS/Lambda"}, envMetricsNamespace, "AWS/Lambda", "begins with AWS/"},
		{"metrics namespace not ASCII", map[string]string{envMetricsNamespace: "café"}, envMetricsNamespace, "café", "not 1..255 printable ASCII"},
		{"service name control", map[string]string{envServiceName: "a\tb"}, envServiceName, "a\tb", "not 1..1024 printable ASCII"},
		{"metrics disabled maybe", map[string]string{envMetricsDisabled: "maybe"}, envMetricsDisabled, "maybe", "not true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := FromEnv(mapEnv(withAPI(tt.env)))
			if err == nil {
				t.Fatalf("FromEnv = %+v, want an error", got)
			}
			if got != (Config{}) {
				t.Errorf("FromEnv returned %+v with an error, want the zero Config", got)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
			var ve *VarError
			if !errors.As(err, &ve) {
				t.Fatalf("errors.As(%v, *VarError) = false", err)
			}
			all := varErrors(t, err)
			if len(all) != 1 {
				t.Fatalf("got %d errors, want 1: %v", len(all), err)
			}
			if ve.Name != tt.bad || ve.Value != tt.value {
				t.Errorf("VarError{Name: %q, Value: %q}, want {%q, %q}", ve.Name, ve.Value, tt.bad, tt.value)
			}
			msg := err.Error()
			if prefix := tt.bad + "=" + strconv.Quote(tt.value) + ": "; !strings.HasPrefix(msg, prefix) {
				t.Errorf("error %q does not start with %q", msg, prefix)
			}
			if !strings.Contains(ve.Reason, tt.reason) {
				t.Errorf("reason %q does not contain %q", ve.Reason, tt.reason)
			}
		})
	}
}

// TestFromEnvAllErrors checks that every bad variable is reported in one
// error, in the order of Vars, and that a rejected N does not also fail a
// plausible LMIGO_SLOTS.
func TestFromEnvAllErrors(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		// AWS_LAMBDA_RUNTIME_API unset
		envMaxConcurrency:      "abc",
		envSlots:               "32",
		envBufferRetain:        "1TiB",
		envMaxRequest:          "-5",
		envMaxResponse:         "0",
		envMemorySize:          "x",
		envMemoryLimitFraction: "2",
		envGOMEMLIMIT:          "anything",
		envLogLevel:            "LOUD",
		envLogFormat:           "xml",
		envShutdownTimeout:     "forever",
		envOverrunGrace:        "-1s",
		envMaxOverruns:         "x",
		envWedgedExit:          "soon",
		envMetrics:             "statsd",
		envMetricsInterval:     "1ms",
		envSIGTERM:             "maybe",
		envReport:              "loud",
		envLabels:              "some",
		envJSONCodec:           "fast",
		envFunctionName:        "fn",
		envMetricsNamespace:    "AWS/x",
		envServiceName:         "\x01",
		envMetricsDisabled:     "2",
	}
	_, err := FromEnv(mapEnv(env))
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("errors.Is(%v, ErrInvalid) = false", err)
	}
	var names []string
	for _, ve := range varErrors(t, err) {
		names = append(names, ve.Name)
	}
	want := []string{envRuntimeAPI, envMaxConcurrency, envBufferRetain, envMaxRequest,
		envMaxResponse, envMemorySize, envMemoryLimitFraction, envLogLevel, envLogFormat, envShutdownTimeout,
		envOverrunGrace, envMaxOverruns, envWedgedExit, envMetrics, envMetricsInterval, envSIGTERM, envReport, envLabels,
		envJSONCodec, envMetricsNamespace, envServiceName, envMetricsDisabled}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("reported %v\nwant     %v", names, want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w+"=") {
			t.Errorf("message lacks %s:\n%v", w, err)
		}
	}

	// Slots above the platform ceiling still fails when N is rejected.
	_, err = FromEnv(mapEnv(withAPI(map[string]string{envMaxConcurrency: "2000", envSlots: "1601"})))
	if got := len(varErrors(t, err)); got != 2 {
		t.Errorf("got %d errors, want 2: %v", got, err)
	}
}

func TestFromEnvNilLookup(t *testing.T) {
	t.Parallel()
	_, err := FromEnv(nil)
	var ve *VarError
	if !errors.As(err, &ve) || ve.Name != envRuntimeAPI {
		t.Fatalf("FromEnv(nil) = %v, want %s required", err, envRuntimeAPI)
	}
}

// TestFromEnvIgnoresProcessEnv proves FromEnv reads only through lookup.
func TestFromEnvIgnoresProcessEnv(t *testing.T) {
	t.Setenv(envRuntimeAPI, testAPI)
	t.Setenv(envMaxConcurrency, "abc")
	c, err := FromEnv(mapEnv(map[string]string{envRuntimeAPI: "10.0.0.1:1"}))
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	if c.RuntimeAPI != "10.0.0.1:1" || c.MaxConcurrency != 1 {
		t.Errorf("FromEnv = %+v, read the process environment", c)
	}
}

func TestVarErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  VarError
		want string
	}{
		{VarError{envMaxConcurrency, "abc", "not an integer (1..1600)"}, `AWS_LAMBDA_MAX_CONCURRENCY="abc": not an integer (1..1600)`},
		{VarError{envRuntimeAPI, "", "required"}, `AWS_LAMBDA_RUNTIME_API="": required`},
		{VarError{envLogLevel, " a\nb ", "r"}, `AWS_LAMBDA_LOG_LEVEL=" a\nb ": r`},
		{VarError{envLogLevel, strings.Repeat("x", 100), "r"}, `AWS_LAMBDA_LOG_LEVEL="` + strings.Repeat("x", 64) + `"...: r`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %s, want %s", got, tt.want)
		}
		if !errors.Is(&tt.err, ErrInvalid) {
			t.Errorf("%v does not wrap ErrInvalid", &tt.err)
		}
	}
	// The exact message of the brief, end to end.
	_, err := FromEnv(mapEnv(withAPI(map[string]string{envMaxConcurrency: "abc"})))
	if want := `AWS_LAMBDA_MAX_CONCURRENCY="abc": not an integer (1..1600)`; err == nil || err.Error() != want {
		t.Errorf("FromEnv error = %v, want %s", err, want)
	}
}

func TestLevelString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		l    Level
		want string
	}{
		{LevelTrace, "TRACE"}, {LevelDebug, "DEBUG"}, {LevelInfo, "INFO"},
		{LevelWarn, "WARN"}, {LevelError, "ERROR"}, {LevelFatal, "FATAL"},
		{Level(9), "Level(9)"}, {Level(-3), "Level(-3)"},
	}
	for _, tt := range tests {
		if got := tt.l.String(); got != tt.want {
			t.Errorf("Level(%d).String() = %q, want %q", int8(tt.l), got, tt.want)
		}
	}
	var zero Level
	if zero != LevelInfo {
		t.Errorf("zero Level = %v, want INFO", zero)
	}
	order := []Level{LevelTrace, LevelDebug, LevelInfo, LevelWarn, LevelError, LevelFatal}
	if !slices.IsSorted(order) {
		t.Errorf("levels are not ordered by severity: %d", order)
	}
}

func TestFormatString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    Format
		want string
	}{
		{FormatJSON, "JSON"}, {FormatText, "TEXT"}, {Format(7), "Format(7)"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("Format(%d).String() = %q, want %q", uint8(tt.f), got, tt.want)
		}
	}
}

func TestMetricsString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		m    Metrics
		want string
	}{
		{MetricsOff, "off"}, {MetricsEMF, "emf"}, {Metrics(9), "Metrics(9)"},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("Metrics(%d).String() = %q, want %q", uint8(tt.m), got, tt.want)
		}
	}
	for _, m := range []Metrics{MetricsOff, MetricsEMF} {
		c, err := FromEnv(mapEnv(withAPI(map[string]string{envMetrics: m.String()})))
		if err != nil || c.Metrics != m {
			t.Errorf("%s: got %v, %v", m, c.Metrics, err)
		}
	}
	var zero Metrics
	if zero != MetricsOff {
		t.Errorf("zero Metrics = %v, want off", zero)
	}
}

// Level and Format names round-trip through FromEnv.
func TestLevelFormatRoundTrip(t *testing.T) {
	t.Parallel()
	for l := LevelTrace; l <= LevelFatal; l++ {
		c, err := FromEnv(mapEnv(withAPI(map[string]string{envLogLevel: l.String()})))
		if err != nil || c.LogLevel != l {
			t.Errorf("%s: got %v, %v", l, c.LogLevel, err)
		}
	}
	for _, f := range []Format{FormatJSON, FormatText} {
		c, err := FromEnv(mapEnv(withAPI(map[string]string{envLogFormat: f.String()})))
		if err != nil || c.LogFormat != f {
			t.Errorf("%s: got %v, %v", f, c.LogFormat, err)
		}
	}
}

func BenchmarkFromEnv(b *testing.B) {
	lookup := mapEnv(map[string]string{
		envRuntimeAPI:     testAPI,
		envMaxConcurrency: "64",
		envInitType:       initTypeLMI,
		envMemorySize:     "2048",
		envLogLevel:       "debug",
		envBufferRetain:   "256KiB",
		envFunctionName:   "fn",
	})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FromEnv(lookup); err != nil {
			b.Fatal(err)
		}
	}
}
