package limits

import "strconv"

// Level is a log level as Lambda names it in AWS_LAMBDA_LOG_LEVEL.
// A larger value is more severe; the zero value is LevelInfo, the default.
type Level int8

// Log levels, least severe first.
const (
	LevelTrace Level = iota - 2
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
	LevelFatal
)

// String returns the level's name as Lambda writes it ("INFO").
func (l Level) String() string {
	switch l {
	case LevelTrace:
		return "TRACE"
	case LevelDebug:
		return "DEBUG"
	case LevelInfo:
		return "INFO"
	case LevelWarn:
		return "WARN"
	case LevelError:
		return "ERROR"
	case LevelFatal:
		return "FATAL"
	}
	return "Level(" + strconv.Itoa(int(l)) + ")"
}

// Format is a log format as named in AWS_LAMBDA_LOG_FORMAT.
// The zero value is FormatJSON, the only format on Lambda Managed Instances.
type Format uint8

// Log formats.
const (
	FormatJSON Format = iota // one JSON object a line
	FormatText               // plain text lines
)

// String returns the format's name as Lambda writes it ("JSON").
func (f Format) String() string {
	switch f {
	case FormatJSON:
		return "JSON"
	case FormatText:
		return "TEXT"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Metrics says whether and how the runtime writes its own metrics, as
// named in LMIGO_METRICS. The zero value is MetricsOff, the default.
type Metrics uint8

// Metrics outputs.
const (
	MetricsOff Metrics = iota // no metrics
	MetricsEMF                // CloudWatch Embedded Metric Format documents on stdout
)

// String returns the output's name as LMIGO_METRICS spells it ("emf").
func (m Metrics) String() string {
	switch m {
	case MetricsOff:
		return "off"
	case MetricsEMF:
		return "emf"
	}
	return "Metrics(" + strconv.Itoa(int(m)) + ")"
}
