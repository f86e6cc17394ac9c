package limits

import (
	"slices"
	"strings"
)

// Names of the variables FromEnv reads.
const (
	envRuntimeAPI          = "AWS_LAMBDA_RUNTIME_API"
	envMaxConcurrency      = "AWS_LAMBDA_MAX_CONCURRENCY"
	envInitType            = "AWS_LAMBDA_INITIALIZATION_TYPE"
	envSlots               = "LMIGO_SLOTS"
	envSlotsOld            = "LMIGO_WORKERS" // LMIGO_SLOTS's old name, still read
	envBufferRetain        = "LMIGO_BUFFER_RETAIN_BYTES"
	envMaxRequest          = "LMIGO_MAX_REQUEST_BYTES"
	envMaxResponse         = "LMIGO_MAX_RESPONSE_BYTES"
	envMemorySize          = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
	envMemoryLimitFraction = "LMIGO_MEMORY_LIMIT_FRACTION"
	envGOMEMLIMIT          = "GOMEMLIMIT"
	envLogLevel            = "AWS_LAMBDA_LOG_LEVEL"
	envLogFormat           = "AWS_LAMBDA_LOG_FORMAT"
	envShutdownTimeout     = "LMIGO_SHUTDOWN_TIMEOUT"
	envOverrunGrace        = "LMIGO_OVERRUN_GRACE"
	envMaxOverruns         = "LMIGO_MAX_OVERRUNS"
	envWedgedExit          = "LMIGO_WEDGED_EXIT"
	envMetrics             = "LMIGO_METRICS"
	envMetricsInterval     = "LMIGO_METRICS_INTERVAL"
	envSIGTERM             = "LMIGO_SIGTERM"
	envReport              = "LMIGO_REPORT"
	envLabels              = "LMIGO_LABELS"
	envJSONCodec           = "LMIGO_JSON_CODEC"
	envFunctionName        = "AWS_LAMBDA_FUNCTION_NAME"
	envMetricsNamespace    = "POWERTOOLS_METRICS_NAMESPACE"
	envServiceName         = "POWERTOOLS_SERVICE_NAME"
	envMetricsDisabled     = "POWERTOOLS_METRICS_DISABLED"
)

// Var describes one environment variable read by FromEnv, for
// documentation: a README table can be generated from, and checked
// against, Vars.
type Var struct {
	Name    string // as set in the environment
	Default string // value used when unset or empty; "required" if there is none
	Meaning string // one sentence: what it sets, and what is accepted
}

// Vars lists every variable FromEnv reads, in the order in which FromEnv
// checks them and reports errors. The slice is new on each call.
func Vars() []Var {
	return []Var{
		{envRuntimeAPI, "required", "host:port of the Runtime API, set by Lambda."},
		{envMaxConcurrency, "1", "N, invocations served at once, set by Lambda on Managed Instances; an integer below 1 means 1, above 1600 is an error."},
		{envInitType, "", `"lambda-managed-instances" marks Lambda Managed Instances, set by Lambda.`},
		{envSlots, "N", "Slots, each holding one /next poll or one invocation: 1..N, never more than N."},
		{envSlotsOld, "", "The old name of LMIGO_SLOTS, still read; when both are set they must agree."},
		{envBufferRetain, "2MiB", "Bytes of buffer each slot keeps between invocations: 0..64MiB; bytes, or a decimal number with KiB, MiB, GiB, KB, MB or GB."},
		{envMaxRequest, "6291556", "Largest request payload read from /next: 1..6291556 (6 MiB + 100 B); bytes, or a decimal number with KiB, MiB, GiB, KB, MB or GB."},
		{envMaxResponse, "6MiB", "Largest buffered response: 1..6291556 (6 MiB + 100 B); bytes, or a decimal number with KiB, MiB, GiB, KB, MB or GB."},
		{envMemorySize, "", "Function memory in MB, set by Lambda: 1..1048576 if set, 0 when unset."},
		{envMemoryLimitFraction, "0.9", "Share of the function memory set as the Go runtime's soft memory limit (GOMEMLIMIT) when GOMEMLIMIT is unset and the memory size is known: 0.1..1, or 0 or off for none."},
		{envGOMEMLIMIT, "", "Read by the Go runtime itself; when set (to anything), lmigo derives no memory limit."},
		{envLogLevel, "INFO", "Lowest log level written: TRACE, DEBUG, INFO, WARN, ERROR or FATAL, any case."},
		{envLogFormat, "JSON on Managed Instances, else TEXT", "Log format: JSON or TEXT, any case."},
		{envShutdownTimeout, "500ms", "How long shutdown waits for running invocations: a Go duration, above 0 and at most 10s."},
		{envOverrunGrace, "500ms", "How long past its deadline a handler may run before a new slot polls in its place (the handler keeps running on its own): a Go duration, above 0 and at most 1h."},
		{envMaxOverruns, "LMIGO_SLOTS", "Most handlers overrunning at once whose slots were replaced: 0..16000; 0 replaces none."},
		{envWedgedExit, "10s", "How long no slot may be able to serve (every one held by an overrunning handler, LMIGO_MAX_OVERRUNS reached) before the process logs FATAL and exits so that Lambda replaces the environment: a Go duration, above 0 and at most 1h, or 0 or off for never."},
		{envMetrics, "off", "Runtime metrics: off, or emf for one CloudWatch Embedded Metric Format line on stdout per interval and one at shutdown; any case."},
		{envMetricsInterval, "60s", "How often metrics are written: a Go duration, 1s..1h."},
		{envSIGTERM, "off", "on (1, true, on): register an internal extension at start, so that Lambda sends SIGTERM before it shuts the execution environment down; off (0, false, off): do not. Any case."},
		{envReport, "off", "on (1, true, on): write one line, invocation report, for each invocation once its answer is sent, and look for goroutines that outlived their invocation once a minute; off (0, false, off): do not. Any case."},
		{envLabels, "on", "on (1, true, on): run each invocation under the profiler labels requestId and function, which the goroutines it starts inherit, and find the goroutines that outlive it; off (0, false, off): no labels. Any case."},
		{envJSONCodec, "std", "JSON codec of typed handlers: std (encoding/json, byte for byte as aws-lambda-go), jsonv2, goccy, sonic or segmentio, any case; a codec other than std must be linked into the bootstrap (import its package under concurrent/codec/)."},
		{envFunctionName, "", "Function name, set by Lambda: the FunctionName dimension of the runtime metrics. (aws-lambda-go's lambdacontext reads this and the other variables Lambda sets itself.)"},
		{envMetricsNamespace, "", "CloudWatch namespace of the handler's metrics (package concurrent/metrics), as Powertools reads it: 1..255 printable ASCII characters, not beginning with AWS/; unset, those metrics are not written."},
		{envServiceName, "", "The service dimension of the handler's metrics and of their ColdStart metric, as Powertools reads it: 1..1024 printable ASCII characters."},
		{envMetricsDisabled, "false", "true: the handler's metrics (package concurrent/metrics) and their ColdStart are not written, and the calls return no error for a missing namespace, as Powertools reads it: 1, y, yes, t, true, on or 0, n, no, f, false, off, any case."},
	}
}

// toolVars are LMIGO_ variables of lmigo's own test tools, which reach a
// bootstrap's environment under them: not warned about.
var toolVars = []string{"LMIGO_RIE_EXEC", "LMIGO_SOAK_FORM"}

// Unknown is an LMIGO_ variable the runtime does not read, with the known
// name nearest to it.
type Unknown struct {
	Name    string
	Nearest string
}

// UnknownVars returns the LMIGO_ variables of environ (as os.Environ gives
// it, "NAME=value") that FromEnv does not read, in environ's order. A typo
// would otherwise be ignored in silence.
func UnknownVars(environ []string) []Unknown {
	var known []string
	for _, v := range Vars() {
		if strings.HasPrefix(v.Name, lmigoPrefix) {
			known = append(known, v.Name)
		}
	}
	var out []Unknown
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(strings.ToUpper(name), lmigoPrefix) ||
			slices.Contains(known, name) || slices.Contains(toolVars, name) ||
			slices.ContainsFunc(out, func(u Unknown) bool { return u.Name == name }) {
			continue
		}
		out = append(out, Unknown{Name: name, Nearest: nearest(strings.ToUpper(name), known)})
	}
	return out
}

const lmigoPrefix = "LMIGO_"

// nearest returns the name of names at the least edit distance from s,
// the first one on a tie.
func nearest(s string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		if d := editDistance(s, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
