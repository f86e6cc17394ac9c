// Package logline bounds the lines a logger writes: a line over the bound
// is cut to fit, as valid JSON in the JSON format, and marked where cut.
package logline

import (
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// MaxLine bounds every line the runtime's logger writes, newline
// included: the runtime's own lines, and the handler's through
// concurrent's Logger, Slog and SlogHandler. The emulator copies a runtime's output with a
// bufio.Scanner, whose 64 KiB token limit stops the copy at the first
// longer line, after which the environment stalls; CloudWatch Logs takes
// events of up to 256 KB. Half the emulator's limit leaves room for what
// the platform adds to a line, and still holds a panic's whole stack.
const MaxLine = 32 << 10

// cutMinString is the length below which a string value is never cut:
// IDs, levels, keys and short values survive a cut line.
const cutMinString = 64

// Writer is the writer under the runtime's zap core. The core hands it
// each line in one Write; a line over Limit is cut to fit before it goes on
// W (CutJSONLine, or cut as text), as JSON when JSON is set. Lines within the
// bound pass as they are.
type Writer struct {
	W     zapcore.WriteSyncer
	JSON  bool
	Limit int
}

// Write writes the line p, cut to fit.
func (b Writer) Write(p []byte) (int, error) {
	if len(p) <= b.Limit {
		return b.W.Write(p)
	}
	var line []byte
	if b.JSON {
		line = CutJSONLine(p, b.Limit)
	} else {
		line = cutTextLine(p, b.Limit)
	}
	if _, err := b.W.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Sync syncs W.
func (b Writer) Sync() error { return b.W.Sync() }

// AppendCutMark appends the mark that ends a cut value or line: n bytes
// were cut there.
func AppendCutMark(b []byte, n int) []byte {
	b = append(b, "…[cut "...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, " bytes]"...)
}

// CutMarkLen is the length of the longest mark a cut of a line of n bytes
// can need.
func CutMarkLen(n int) int { return len(AppendCutMark(nil, n)) }

// splitNewline returns line without its newline, and the newline.
func splitNewline(line []byte) (body, nl []byte) {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		return line[:n-1], line[n-1:]
	}
	return line, nil
}

// cutTextLine cuts a TEXT line to at most limit bytes: its start, up to
// a character boundary, then the mark and the newline.
func cutTextLine(line []byte, limit int) []byte {
	body, nl := splitNewline(line)
	keep := max(limit-len(nl)-CutMarkLen(len(body)), 0)
	for keep > 0 && !utf8.RuneStart(body[keep]) {
		keep--
	}
	out := make([]byte, 0, limit)
	out = append(out, body[:keep]...)
	out = AppendCutMark(out, len(body)-keep)
	return append(out, nl...)
}

// jsonString is the content of a string in a JSON line, between its
// quotes: line[start:end], escapes as written.
type jsonString struct{ start, end int }

func (s jsonString) len() int { return s.end - s.start }

// scanJSONLine finds the strings of a JSON object line and where each
// member of the outer object begins (the offset of its key's quote). ok is
// false when the line is not one object.
func scanJSONLine(line []byte) (strs []jsonString, members []int, ok bool) {
	depth := 0
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '"':
			if depth == 1 && (line[i-1] == '{' || line[i-1] == ',') {
				members = append(members, i)
			}
			j := i + 1
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(line) {
				return nil, nil, false
			}
			strs = append(strs, jsonString{i + 1, j})
			i = j
		case '{', '[':
			if depth == 0 && (c != '{' || i != 0) {
				return nil, nil, false
			}
			depth++
		case '}', ']':
			depth--
			if depth == 0 && i != len(line)-1 {
				return nil, nil, false
			}
		}
	}
	return strs, members, depth == 0 && len(line) > 0
}

// CutJSONString returns how many bytes of the string content s to keep,
// at most n, ending on a character and not inside an escape.
func CutJSONString(s []byte, n int) int {
	keep := 0
	for keep < len(s) {
		unit := 1
		switch c := s[keep]; {
		case c == '\\' && keep+1 < len(s) && s[keep+1] == 'u':
			unit = 6
		case c == '\\':
			unit = 2
		case c >= utf8.RuneSelf:
			_, unit = utf8.DecodeRune(s[keep:])
		}
		if keep+unit > n {
			break
		}
		keep += unit
	}
	return keep
}

// CutJSONLine cuts a JSON line to at most limit bytes and keeps it one
// valid JSON object. The longest strings are cut first, each to the same
// length and none below 64 bytes, each ending in the mark
// "…[cut N bytes]" (N bytes of the value as written, escapes included).
// If that is not enough (thousands of fields, long arrays of numbers), the
// outer object's last members are dropped for one member
// "truncated":"…[cut N bytes]". A line that is not one object, which zap's
// encoder does not write, is cut as text.
func CutJSONLine(line []byte, limit int) []byte {
	body, nl := splitNewline(line)
	strs, _, ok := scanJSONLine(body)
	if !ok {
		return cutTextLine(line, limit)
	}
	mark := CutMarkLen(len(body))
	excess := len(body) + len(nl) - limit
	longest := 0
	for _, s := range strs {
		longest = max(longest, s.len())
	}
	// saved is what cutting every string to n bytes saves at least.
	saved := func(n int) int {
		total := 0
		for _, s := range strs {
			if s.len() > n+mark {
				total += s.len() - n - mark
			}
		}
		return total
	}
	// The longest length to cut to that saves enough, or cutMinString.
	lo, hi := cutMinString, max(longest, cutMinString)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if saved(mid) >= excess {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out := make([]byte, 0, min(len(body), limit+mark))
	from := 0
	for _, s := range strs {
		if s.len() <= lo+mark {
			continue
		}
		keep := CutJSONString(body[s.start:s.end], lo)
		out = append(out, body[from:s.start+keep]...)
		out = AppendCutMark(out, s.len()-keep)
		from = s.end
	}
	out = append(out, body[from:]...)
	if len(out)+len(nl) > limit {
		out = dropMembers(out, limit-len(nl))
	}
	return append(out, nl...)
}

// truncatedKey names the member that stands for the members dropped from
// the end of a line.
const truncatedKey = "truncated"

// dropMembers keeps the first members of the JSON object line that fit in
// limit bytes, followed by a member truncatedKey whose mark says how many
// bytes were dropped.
func dropMembers(line []byte, limit int) []byte {
	_, members, ok := scanJSONLine(line)
	if !ok {
		return cutTextLine(line, limit)
	}
	tail := len(`,"`+truncatedKey+`":""}`) + CutMarkLen(len(line))
	end := 1 // keep none: just the '{'
	for k := 1; k < len(members) && members[k]-1+tail <= limit; k++ {
		end = members[k] - 1 // keep members[:k], up to the ',' before member k
	}
	out := make([]byte, 0, limit)
	out = append(out, line[:end]...)
	if end > 1 {
		out = append(out, ',')
	}
	out = append(out, `"`+truncatedKey+`":"`...)
	out = AppendCutMark(out, len(line)-1-end)
	return append(out, `"}`...)
}

// What the runtime itself logs through a logger given by WithLogger, whose
// core has no bound of its own: each line's message and string, error and
// stringer values are cut, before any core sees them, so that together
// they take at most boundedValues bytes as JSON escapes them; the rest of
// MaxLine is left for keys, IDs, the level, the time and the
// runtime's other values, which are short or bounded where they are made
// (stacks, lists). An error goes as text (errorText), so that zap derives
// no field from it that the bound does not measure.
const boundedValues = MaxLine - 8<<10

// boundCore bounds the runtime's own lines on their way to a user's core.
// errText is the text of an error field.
type boundCore struct {
	zapcore.Core
	errText func(error) string
}

// Logger wraps l so that what the runtime logs through it is bounded;
// errText is the text an error field is bounded as.
func Logger(l *zap.Logger, errText func(error) string) *zap.Logger {
	return l.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return boundCore{c, errText} }))
}

func (c boundCore) With(fs []zapcore.Field) zapcore.Core {
	_, fs = boundValues("", fs, c.errText)
	return boundCore{c.Core.With(fs), c.errText}
}

func (c boundCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

// Write hands the bounded entry to the user's core through its own Check,
// so that its sampling and levels hold.
func (c boundCore) Write(ent zapcore.Entry, fs []zapcore.Field) error {
	ent.Message, fs = boundValues(ent.Message, fs, c.errText)
	if ce := c.Core.Check(ent, nil); ce != nil {
		ce.Write(fs...)
	}
	return nil
}

// boundValues cuts msg and the string-like values of fs so that together
// they fit boundedValues: the short ones whole, the long ones sharing the
// rest alike. fs is copied when a value changes, or holds an error.
func boundValues(msg string, fs []zapcore.Field, errText func(error) string) (string, []zapcore.Field) {
	fs = errorText(fs, errText)
	vals := make([]string, len(fs)+1)
	vals[0] = msg
	total := jsonLen(msg)
	for i := range fs {
		if s, ok := fieldText(&fs[i]); ok {
			vals[i+1] = s
			total += jsonLen(s)
		}
	}
	if total <= boundedValues {
		return msg, fs
	}
	// Each value gets at most an equal share of what the shorter ones
	// leave.
	lens := make([]int, len(vals))
	order := make([]int, len(vals))
	for i, v := range vals {
		lens[i], order[i] = jsonLen(v), i
	}
	slices.SortFunc(order, func(a, b int) int { return lens[a] - lens[b] })
	left := boundedValues
	share := make([]int, len(vals))
	for k, i := range order {
		share[i] = min(lens[i], left/(len(order)-k))
		left -= share[i]
	}
	out := slices.Clone(fs)
	for i := range out {
		if lens[i+1] > share[i+1] {
			out[i] = zap.String(out[i].Key, cutJSONText(vals[i+1], share[i+1]))
		}
	}
	if lens[0] > share[0] {
		msg = cutJSONText(msg, share[0])
	}
	return msg, out
}

// errorText returns fs with each error field written as zap writes an
// error, but as strings the bound measures: its text (errText), under its
// key, and its verbose form (%+v, a stack with pkg/errors) under key +
// "Verbose", where it has one. A group's causes (multierr's Errors) are not
// listed apart: its text holds theirs. fs is copied when it holds an error.
func errorText(fs []zapcore.Field, errText func(error) string) []zapcore.Field {
	var out []zapcore.Field
	for i, f := range fs {
		err, ok := f.Interface.(error)
		if f.Type != zapcore.ErrorType || !ok || err == nil {
			if out != nil {
				out = append(out, f)
			}
			continue
		}
		if out == nil {
			out = append(make([]zapcore.Field, 0, len(fs)+1), fs[:i]...)
		}
		text := errText(err)
		out = append(out, zap.String(f.Key, text))
		_, group := err.(interface{ Errors() []error })
		if _, verbose := err.(fmt.Formatter); verbose && !group {
			if v := fmt.Sprintf("%+v", err); v != text {
				out = append(out, zap.String(f.Key+"Verbose", v))
			}
		}
	}
	if out == nil {
		return fs
	}
	return out
}

// fieldText is the text of a string or stringer field.
func fieldText(f *zapcore.Field) (string, bool) {
	switch f.Type {
	case zapcore.StringType:
		return f.String, true
	case zapcore.ByteStringType, zapcore.BinaryType:
		return string(f.Interface.([]byte)), true
	case zapcore.StringerType:
		if s, ok := f.Interface.(fmt.Stringer); ok && s != nil {
			return stringOf(s), true
		}
	}
	return "", false
}

// stringOf is s.String(), or the panic it raised.
func stringOf(s fmt.Stringer) (str string) {
	defer func() {
		if v := recover(); v != nil {
			str = fmt.Sprintf("panic in String: %v", v)
		}
	}()
	return s.String()
}

// jsonLen is how long s is as a JSON encoder escapes it, at worst.
func jsonLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c < 0x20:
			n, i = n+6, i+1
		case c == '"' || c == '\\':
			n, i = n+2, i+1
		case c < utf8.RuneSelf:
			n, i = n+1, i+1
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			w := size
			if r == utf8.RuneError && size == 1 {
				w = 6 // written as \ufffd
			}
			n, i = n+w, i+size
		}
	}
	return n
}

// cutJSONText cuts s, at a character's start, so that it takes at most
// limit bytes escaped, its cut mark included.
func cutJSONText(s string, limit int) string {
	limit -= CutMarkLen(len(s))
	n := 0
	keep := 0
	for keep < len(s) {
		_, size := utf8.DecodeRuneInString(s[keep:])
		w := jsonLen(s[keep : keep+size])
		if n+w > limit {
			break
		}
		n += w
		keep += size
	}
	return string(AppendCutMark([]byte(s[:keep]), len(s)-keep))
}
