package limits

import (
	"errors"
	"math/big"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// reader looks variables up and collects every problem, so that FromEnv
// can report them all at once.
type reader struct {
	lookup func(string) (string, bool)
	errs   []error
}

// get returns the raw value and the trimmed one; "" means unset.
func (r *reader) get(name string) (raw, val string) {
	if r.lookup == nil {
		return "", ""
	}
	raw, ok := r.lookup(name)
	if !ok {
		return "", ""
	}
	return raw, strings.TrimSpace(raw)
}

func (r *reader) fail(name, raw, reason string) {
	r.errs = append(r.errs, &VarError{Name: name, Value: raw, Reason: reason})
}

func (r *reader) str(name string) string {
	_, v := r.get(name)
	return v
}

// runtimeAPI accepts host:port with a plain host name or IP address; the
// value ends up in request lines and Host headers, so nothing else may pass.
func (r *reader) runtimeAPI(name string) string {
	raw, v := r.get(name)
	const want = "host:port, e.g. 127.0.0.1:9001"
	if v == "" {
		r.fail(name, raw, "required ("+want+")")
		return ""
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" || !validHost(host) {
		r.fail(name, raw, "not "+want)
		return ""
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || port[0] == '+' {
		r.fail(name, raw, "port not in 1..65535 ("+want+")")
		return ""
	}
	return v
}

func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '-', c == '_', c == ':', c == '%':
		default:
			return false
		}
	}
	return true
}

// maxConcurrency follows the platform: unset or below 1 means 1. ok is
// false when the value was rejected, so that Slots is not judged
// against a made-up N.
func (r *reader) maxConcurrency(name string) (n int, ok bool) {
	raw, v := r.get(name)
	if v == "" {
		return 1, true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			if v[0] == '-' {
				return 1, true // an integer below 1
			}
			r.fail(name, raw, "out of range (1..1600)")
			return 1, false
		}
		r.fail(name, raw, "not an integer (1..1600)")
		return 1, false
	}
	if n < 1 {
		return 1, true
	}
	if n > maxConcurrencyLimit {
		r.fail(name, raw, "out of range (1..1600)")
		return 1, false
	}
	return n, true
}

// slots defaults to n and may only lower it. old is the variable's former
// name, still read: alone it counts as name, and set with name it must
// give the same count.
func (r *reader) slots(name, old string, n int, nOK bool) int {
	s, _, set := r.slotCount(name, n, nOK)
	o, oldRaw, oldSet := r.slotCount(old, n, nOK)
	switch {
	case oldSet && !set:
		return o
	case oldSet && o != s:
		r.fail(old, oldRaw, "differs from "+name+"="+strconv.Itoa(s)+" (its new name): set only "+name)
	}
	return s
}

// slotCount reads one name of the slot count; set is false when it is
// unset or rejected (then the count is n). When n itself was rejected,
// only the platform ceiling can be checked.
func (r *reader) slotCount(name string, n int, nOK bool) (count int, raw string, set bool) {
	raw, v := r.get(name)
	if v == "" {
		return n, raw, false
	}
	hi := n
	if !nOK {
		hi = maxConcurrencyLimit
	}
	reason := "(1.." + strconv.Itoa(hi) + ", at most " + envMaxConcurrency + ")"
	w, err := strconv.Atoi(v)
	if err != nil {
		if !errors.Is(err, strconv.ErrRange) {
			r.fail(name, raw, "not an integer "+reason)
			return n, raw, false
		}
		w = -1 // out of int range either way
	}
	if w < 1 || w > hi {
		r.fail(name, raw, "out of range "+reason)
		return n, raw, false
	}
	return w, raw, true
}

// size parses a byte count: bytes, or a decimal number with a KiB, MiB,
// GiB, KB, MB or GB suffix that comes to a whole number of bytes.
func (r *reader) size(name string, def, lo, hi int) int {
	raw, v := r.get(name)
	if v == "" {
		return def
	}
	bounds := strconv.Itoa(lo) + ".." + strconv.Itoa(hi) + " bytes"
	neg := v[0] == '-'
	if neg {
		v = v[1:]
	}
	n, status := parseSize(v, hi)
	switch {
	case status == sizeSyntax:
		r.fail(name, raw, "not a size (bytes, or a decimal number with KiB, MiB, GiB, KB, MB or GB, e.g. 1.5MiB; "+bounds+")")
	case status == sizeFraction:
		r.fail(name, raw, "not a whole number of bytes ("+bounds+")")
	case neg, n < lo, n > hi: // even "-0": sizes are written without a sign
		r.fail(name, raw, "out of range ("+bounds+")")
	default:
		return n
	}
	return def
}

// What parseSize found wrong, if anything.
const (
	sizeOK = iota
	sizeSyntax
	sizeFraction
)

// sizeUnits are the suffixes a size may carry, in lower case.
var sizeUnits = map[string]int64{
	"": 1, "kib": kib, "mib": mib, "gib": 1 << 30, "kb": 1e3, "mb": 1e6, "gb": 1e9,
}

// parseSize reads digits, an optional fraction and an optional unit, and
// computes the bytes exactly (math/big: no float rounds 1.1MiB, no digit
// count overflows). A well-formed size above hi comes back as hi+1.
func parseSize(s string, hi int) (n, status int) {
	digits := func(s string) int {
		i := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	whole := digits(s)
	if whole == 0 {
		return 0, sizeSyntax
	}
	num, rest := s[:whole], s[whole:]
	frac := ""
	if rest != "" && rest[0] == '.' {
		k := digits(rest[1:])
		if k == 0 {
			return 0, sizeSyntax
		}
		frac, rest = strings.TrimRight(rest[1:1+k], "0"), rest[1+k:]
	}
	mult, ok := sizeUnits[strings.ToLower(strings.TrimLeft(rest, " "))]
	if !ok {
		return 0, sizeSyntax
	}
	// (num.frac × mult) = (numfrac × mult) / 10^len(frac)
	v, _ := new(big.Int).SetString(num+frac, 10)
	v.Mul(v, big.NewInt(mult))
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	v.QuoRem(v, den, den)
	if den.Sign() != 0 {
		return 0, sizeFraction
	}
	if !v.IsInt64() || v.Int64() > int64(hi) {
		return hi + 1, sizeOK
	}
	return int(v.Int64()), sizeOK
}

func (r *reader) memoryMB(name string) int {
	raw, v := r.get(name)
	if v == "" {
		return 0
	}
	m, err := strconv.Atoi(v)
	if err != nil {
		if !errors.Is(err, strconv.ErrRange) {
			r.fail(name, raw, "not an integer (1..1048576)")
			return 0
		}
		m = -1
	}
	if m < 1 || m > maxMemoryMB {
		r.fail(name, raw, "out of range (1..1048576)")
		return 0
	}
	return m
}

// fraction parses a decimal share of something in lo..1; 0 or off
// (any case) turns it off and gives 0.
func (r *reader) fraction(name string, def, lo float64) float64 {
	raw, v := r.get(name)
	if v == "" {
		return def
	}
	if strings.EqualFold(v, "off") {
		return 0
	}
	bounds := "(" + strconv.FormatFloat(lo, 'f', -1, 64) + "..1, or 0 or off)"
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < '0' || c > '9') && c != '.' {
			// Digits and a point only: no sign, exponent, NaN, Inf or hex.
			r.fail(name, raw, "not a decimal fraction "+bounds)
			return def
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		r.fail(name, raw, "not a decimal fraction "+bounds)
		return def
	}
	if f == 0 {
		return 0
	}
	if f < lo || f > 1 {
		r.fail(name, raw, "out of range "+bounds)
		return def
	}
	return f
}

// present reports whether name is set, to anything: the value is for
// someone else to read.
func (r *reader) present(name string) bool {
	if r.lookup == nil {
		return false
	}
	_, ok := r.lookup(name)
	return ok
}

func (r *reader) level(name string) Level {
	raw, v := r.get(name)
	switch strings.ToUpper(v) {
	case "":
		return LevelInfo
	case "TRACE":
		return LevelTrace
	case "DEBUG":
		return LevelDebug
	case "INFO":
		return LevelInfo
	case "WARN":
		return LevelWarn
	case "ERROR":
		return LevelError
	case "FATAL":
		return LevelFatal
	}
	r.fail(name, raw, "not a log level (TRACE, DEBUG, INFO, WARN, ERROR, FATAL)")
	return LevelInfo
}

func (r *reader) format(name string, def Format) Format {
	raw, v := r.get(name)
	switch strings.ToUpper(v) {
	case "":
		return def
	case "JSON":
		return FormatJSON
	case "TEXT":
		return FormatText
	}
	r.fail(name, raw, "not a log format (JSON, TEXT)")
	return def
}

// duration parses a Go duration within lo..hi; lo == 0 means above 0.
func (r *reader) duration(name string, def, lo, hi time.Duration) time.Duration {
	raw, v := r.get(name)
	if v == "" {
		return def
	}
	bounds := "(above 0, at most " + hi.String() + ")"
	if lo > 0 {
		bounds = "(" + lo.String() + ".." + hi.String() + ")"
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		r.fail(name, raw, "not a Go duration, e.g. 500ms "+bounds)
		return def
	}
	if d <= 0 || d < lo || d > hi {
		r.fail(name, raw, "out of range "+bounds)
		return def
	}
	return d
}

// durationOff is duration with 0 or off (any case) for none, which gives 0.
func (r *reader) durationOff(name string, def, hi time.Duration) time.Duration {
	raw, v := r.get(name)
	if v == "0" || strings.EqualFold(v, "off") {
		return 0
	}
	d, err := time.ParseDuration(v)
	switch {
	case v == "":
		return def
	case err != nil:
		r.fail(name, raw, "not a Go duration, e.g. 30s, or 0 or off")
	case d <= 0 || d > hi:
		r.fail(name, raw, "out of range (above 0, at most "+hi.String()+", or 0 or off)")
	default:
		return d
	}
	return def
}

// count parses an integer within lo..hi.
func (r *reader) count(name string, def, lo, hi int) int {
	raw, v := r.get(name)
	if v == "" {
		return def
	}
	bounds := "(" + strconv.Itoa(lo) + ".." + strconv.Itoa(hi) + ")"
	n, err := strconv.Atoi(v)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		r.fail(name, raw, "not an integer "+bounds)
	case err != nil, n < lo, n > hi:
		r.fail(name, raw, "out of range "+bounds)
	default:
		return n
	}
	return def
}

func (r *reader) metrics(name string) Metrics {
	raw, v := r.get(name)
	switch strings.ToUpper(v) {
	case "", "OFF":
		return MetricsOff
	case "EMF":
		return MetricsEMF
	}
	r.fail(name, raw, "not a metrics output (OFF, EMF)")
	return MetricsOff
}

// flag parses an on/off switch: 1, true, on or 0, false, off, any case;
// unset is def.
func (r *reader) flag(name string, def bool) bool {
	raw, v := r.get(name)
	switch strings.ToLower(v) {
	case "":
		return def
	case "0", "false", "off":
		return false
	case "1", "true", "on":
		return true
	}
	r.fail(name, raw, "not on or off (1, true, on, 0, false, off)")
	return false
}

// powertoolsFlag parses a switch as Powertools for AWS Lambda reads one:
// 1, y, yes, t, true, on or 0, n, no, f, false, off, any case; unset is
// false.
func (r *reader) powertoolsFlag(name string) bool {
	raw, v := r.get(name)
	switch strings.ToLower(v) {
	case "", "0", "n", "no", "f", "false", "off":
		return false
	case "1", "y", "yes", "t", "true", "on":
		return true
	}
	r.fail(name, raw, "not true or false (1, y, yes, t, true, on, 0, n, no, f, false, off)")
	return false
}

// jsonCodecs are the names LMIGO_JSON_CODEC accepts: the built-in std and
// the codec packages under concurrent/codec. Whether the bootstrap links the
// one named is for the runtime to say.
var jsonCodecs = []string{"std", "jsonv2", "goccy", "sonic", "segmentio"}

func (r *reader) jsonCodec(name string) string {
	raw, v := r.get(name)
	v = strings.ToLower(v)
	if v == "" || slices.Contains(jsonCodecs, v) {
		return v
	}
	r.fail(name, raw, "not a JSON codec ("+strings.Join(jsonCodecs, ", ")+")")
	return ""
}

// CloudWatch's bounds on what names a metric (PutMetricData, Dimension).
const (
	maxNamespace      = 255
	maxDimensionValue = 1024
)

// namespace reads a CloudWatch namespace: printable ASCII, not only
// spaces, and not AWS/, which CloudWatch keeps for its services.
func (r *reader) namespace(name string) string {
	raw, v := r.get(name)
	switch {
	case v == "":
	case len(v) > maxNamespace || !printableASCII(v):
		r.fail(name, raw, "not 1..255 printable ASCII characters (a CloudWatch namespace)")
		return ""
	case strings.HasPrefix(v, "AWS/"):
		r.fail(name, raw, "begins with AWS/, which CloudWatch keeps for AWS services")
		return ""
	}
	return v
}

// dimensionValue reads a CloudWatch dimension value: 1..1024 printable
// ASCII characters.
func (r *reader) dimensionValue(name string) string {
	raw, v := r.get(name)
	if v != "" && (len(v) > maxDimensionValue || !printableASCII(v)) {
		r.fail(name, raw, "not 1..1024 printable ASCII characters (a CloudWatch dimension value)")
		return ""
	}
	return v
}

func printableASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
