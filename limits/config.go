package limits

import (
	"errors"
	"time"
)

// Config is the runtime's whole configuration, as read by FromEnv.
// A Config returned without error satisfies the bounds listed in the
// package documentation; the zero Config is not valid.
type Config struct {
	RuntimeAPI        string // AWS_LAMBDA_RUNTIME_API, host:port
	MaxConcurrency    int    // N, from AWS_LAMBDA_MAX_CONCURRENCY: 1..1600
	ManagedInstances  bool   // AWS_LAMBDA_INITIALIZATION_TYPE == "lambda-managed-instances"
	Slots             int    // LMIGO_SLOTS (or LMIGO_WORKERS): 1..MaxConcurrency, one poll or invocation each
	BufferRetainBytes int    // LMIGO_BUFFER_RETAIN_BYTES: per-slot buffer kept between invocations
	MaxRequestBytes   int    // LMIGO_MAX_REQUEST_BYTES: bound on the /next body read
	MaxResponseBytes  int    // LMIGO_MAX_RESPONSE_BYTES: bound on a buffered response
	MemoryMB          int    // AWS_LAMBDA_FUNCTION_MEMORY_SIZE, 0 if unset
	// MemoryLimitFraction (LMIGO_MEMORY_LIMIT_FRACTION) is the share of
	// MemoryMB given to the Go runtime as its soft memory limit: 0.1..1,
	// or 0 for none.
	MemoryLimitFraction float64
	GOMEMLIMITSet       bool          // GOMEMLIMIT is set (to anything): the user chose the limit
	LogLevel            Level         // AWS_LAMBDA_LOG_LEVEL
	LogFormat           Format        // AWS_LAMBDA_LOG_FORMAT
	FunctionName        string        // AWS_LAMBDA_FUNCTION_NAME
	ShutdownTimeout     time.Duration // LMIGO_SHUTDOWN_TIMEOUT
	// OverrunGrace (LMIGO_OVERRUN_GRACE) is how long past its deadline a
	// handler may run before its slot is replaced: the platform has ended
	// the invocation by then.
	OverrunGrace time.Duration
	// MaxOverruns (LMIGO_MAX_OVERRUNS) bounds the handlers overrunning at
	// once whose slots were replaced: 0..16000, the slot count by default;
	// 0 replaces none.
	MaxOverruns int
	// WedgedExit (LMIGO_WEDGED_EXIT) is how long no slot may be able to
	// serve, every one held by an overrunning handler and MaxOverruns
	// reached, before the process ends itself; 0 never.
	WedgedExit      time.Duration
	Metrics         Metrics       // LMIGO_METRICS
	MetricsInterval time.Duration // LMIGO_METRICS_INTERVAL: how often metrics are written
	SIGTERM         bool          // LMIGO_SIGTERM: register an extension so that Lambda sends SIGTERM
	// Report (LMIGO_REPORT): one line for each invocation once answered,
	// and a look for goroutines that outlived their invocation each minute.
	Report bool
	// Labels (LMIGO_LABELS, on by default): each invocation runs under the
	// profiler labels requestId and function.
	Labels bool
	// JSONCodec (LMIGO_JSON_CODEC) names the JSON codec of typed handlers,
	// lower case: std, jsonv2, goccy, sonic or segmentio, or "" when unset.
	JSONCodec string
	// MetricsNamespace (POWERTOOLS_METRICS_NAMESPACE) is the CloudWatch
	// namespace of the handler's own metrics (package concurrent/metrics),
	// "" when unset: they are then not written.
	MetricsNamespace string
	// ServiceName (POWERTOOLS_SERVICE_NAME) is the service dimension of
	// the handler's metrics, "" when unset.
	ServiceName string
	// MetricsDisabled (POWERTOOLS_METRICS_DISABLED): the handler's metrics
	// are recorded and checked as usual, and never written.
	MetricsDisabled bool
}

// Defaults and bounds.
const (
	maxConcurrencyLimit = 1600 // the platform's ceiling for AWS_LAMBDA_MAX_CONCURRENCY
	initTypeLMI         = "lambda-managed-instances"

	kib = 1024
	mib = 1024 * kib

	// 2 MiB, by measurement (README, Configuration): a slot keeps a 1 MiB
	// response buffer beside its request buffer, so 1 MiB responses stop
	// costing a new buffer and a GC every third invocation, at 2 MiB x N
	// idle at worst; 4 MiB and more keep hundreds of MiB at N=64.
	defaultBufferRetain = 2 * mib
	maxBufferRetain     = 64 * mib

	// The Runtime API accepts buffered payloads up to 6 MiB + 100 B.
	maxPayload         = 6*mib + 100
	defaultMaxRequest  = maxPayload
	defaultMaxResponse = 6 * mib

	maxMemoryMB = 1 << 20 // 1 TiB: far above any instance, and MB<<20 still fits int64

	// The Go runtime's soft memory limit counts the heap, goroutine stacks
	// and its own metadata, but not the binary's text and data, memory
	// outside Go, nor the kernel's socket buffers, all charged to the
	// function's memory. A tenth of it is left for those and for the
	// limit's overshoot (it is soft); below 0.1 the limit would make the
	// GC run all the time for nothing.
	defaultMemoryLimitFraction = 0.9
	minMemoryLimitFraction     = 0.1

	defaultShutdownTimeout = 500 * time.Millisecond
	maxShutdownTimeout     = 10 * time.Second

	// The emulator answers "Task timed out" 1 to 2 ms after the deadline
	// (README, Configuration): half a second is hundreds of times that,
	// and gives the capacity back within a second of the deadline.
	defaultOverrunGrace = 500 * time.Millisecond
	maxOverrunGrace     = time.Hour
	// maxOverruns: ten times the platform's largest N; each overrun costs
	// a goroutine and what its handler holds.
	maxOverruns = 10 * maxConcurrencyLimit
	// defaultWedgedExit: long enough for a downstream that hung every
	// handler to come back from a blip, short against the minutes a
	// wedged environment would throttle every invoke routed to it.
	defaultWedgedExit = 10 * time.Second
	maxWedgedExit     = time.Hour

	// CloudWatch stores metrics at 1-minute resolution unless told
	// otherwise; a second is its finest resolution.
	defaultMetricsInterval = 60 * time.Second
	minMetricsInterval     = time.Second
	maxMetricsInterval     = time.Hour
)

// FromEnv reads and validates the configuration through lookup, which has
// the signature of os.LookupEnv; a nil lookup is an empty environment.
// It reports every invalid variable at once: the error is an errors.Join
// of *VarError values, each wrapping ErrInvalid. On error the Config is
// the zero Config.
func FromEnv(lookup func(string) (string, bool)) (Config, error) {
	r := reader{lookup: lookup}
	var c Config

	c.RuntimeAPI = r.runtimeAPI(envRuntimeAPI)
	n, nOK := r.maxConcurrency(envMaxConcurrency)
	c.MaxConcurrency = n
	c.ManagedInstances = r.str(envInitType) == initTypeLMI
	c.Slots = r.slots(envSlots, envSlotsOld, n, nOK)
	c.BufferRetainBytes = r.size(envBufferRetain, defaultBufferRetain, 0, maxBufferRetain)
	c.MaxRequestBytes = r.size(envMaxRequest, defaultMaxRequest, 1, maxPayload)
	c.MaxResponseBytes = r.size(envMaxResponse, defaultMaxResponse, 1, maxPayload)
	c.MemoryMB = r.memoryMB(envMemorySize)
	c.MemoryLimitFraction = r.fraction(envMemoryLimitFraction, defaultMemoryLimitFraction, minMemoryLimitFraction)
	c.GOMEMLIMITSet = r.present(envGOMEMLIMIT)
	c.LogLevel = r.level(envLogLevel)
	defFormat := FormatText
	if c.ManagedInstances {
		defFormat = FormatJSON
	}
	c.LogFormat = r.format(envLogFormat, defFormat)
	c.ShutdownTimeout = r.duration(envShutdownTimeout, defaultShutdownTimeout, 0, maxShutdownTimeout)
	c.OverrunGrace = r.duration(envOverrunGrace, defaultOverrunGrace, 0, maxOverrunGrace)
	c.MaxOverruns = r.count(envMaxOverruns, c.Slots, 0, maxOverruns)
	c.WedgedExit = r.durationOff(envWedgedExit, defaultWedgedExit, maxWedgedExit)
	c.Metrics = r.metrics(envMetrics)
	c.MetricsInterval = r.duration(envMetricsInterval, defaultMetricsInterval, minMetricsInterval, maxMetricsInterval)
	c.SIGTERM = r.flag(envSIGTERM, false)
	c.Report = r.flag(envReport, false)
	c.Labels = r.flag(envLabels, true)
	c.JSONCodec = r.jsonCodec(envJSONCodec)
	c.FunctionName = r.str(envFunctionName)
	c.MetricsNamespace = r.namespace(envMetricsNamespace)
	c.ServiceName = r.dimensionValue(envServiceName)
	c.MetricsDisabled = r.powertoolsFlag(envMetricsDisabled)

	if len(r.errs) > 0 {
		return Config{}, errors.Join(r.errs...)
	}
	return c, nil
}
