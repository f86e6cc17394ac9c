package lambdahttp

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendHead appends the members statusCode, headers and cookies of an
// answer's JSON object (without braces): headers sorted by name, each
// header's values joined by commas, Set-Cookie values as cookies, empty
// members left out, strings escaped as encoding/json's Marshal escapes them
// (HTML too). So the streamed prelude is byte for byte what aws-lambda-go's
// LambdaFunctionURLStreamingResponse writes for the same header.
func appendHead(dst []byte, status int, h http.Header) []byte {
	dst = append(dst, `"statusCode":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	var keysArr [32]string
	keys := keysArr[:0]
	var cookies []string
	for k, v := range h {
		if isSetCookie(k) {
			cookies = v
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		dst = append(dst, `,"headers":{`...)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k, true)
			dst = append(dst, ':', '"')
			for j, v := range h[k] {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendStringBody(dst, v, true)
			}
			dst = append(dst, '"')
		}
		dst = append(dst, '}')
	}
	if len(cookies) > 0 {
		dst = append(dst, `,"cookies":[`...)
		for i, c := range cookies {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, c, true)
		}
		dst = append(dst, ']')
	}
	return dst
}

func isSetCookie(k string) bool { return len(k) == 10 && strings.EqualFold(k, "Set-Cookie") }

// appendString appends s as a JSON string.
func appendString[S []byte | string](dst []byte, s S, html bool) []byte {
	dst = append(dst, '"')
	dst = appendStringBody(dst, s, html)
	return append(dst, '"')
}

// safeLoose[b] is set for the ASCII bytes a JSON string carries as they
// are; safeStrict leaves out <, > and & too, as encoding/json's HTML
// escaping does.
var safeStrict, safeLoose = escapeTables()

func escapeTables() (html, plain *[utf8.RuneSelf]bool) {
	html, plain = new([utf8.RuneSelf]bool), new([utf8.RuneSelf]bool)
	for b := byte(0x20); b < utf8.RuneSelf; b++ {
		plain[b] = b != '"' && b != '\\'
		html[b] = plain[b] && b != '<' && b != '>' && b != '&'
	}
	return html, plain
}

const hexDigits = "0123456789abcdef"

// appendStringBody appends the inside of a JSON string holding s, as
// encoding/json does: invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are
// escaped, and with html so are <, > and &.
func appendStringBody[S []byte | string](dst []byte, s S, html bool) []byte {
	safe := safeLoose
	if html {
		safe = safeStrict
	}
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if safe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		var r rune
		var size int
		if len(s)-i >= utf8.UTFMax {
			r, size = utf8.DecodeRune([]byte(s[i : i+utf8.UTFMax]))
		} else {
			r, size = utf8.DecodeRune([]byte(s[i:]))
		}
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// textual reports whether a body of this Content-Type and Content-Encoding
// is sent as a JSON string rather than in base64 (provided it is valid
// UTF-8): text/*, JSON, XML, YAML, JavaScript and form types, unencoded.
func textual(contentType, contentEncoding string) bool {
	if contentEncoding != "" && !strings.EqualFold(contentEncoding, "identity") {
		return false
	}
	if contentType == "" {
		return true
	}
	mt := contentType
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = strings.TrimSpace(mt)
	if len(mt) > 5 && strings.EqualFold(mt[:5], "text/") {
		return true
	}
	for _, t := range textTypes {
		if strings.EqualFold(mt, t) {
			return true
		}
	}
	for _, suffix := range []string{"+json", "+xml", "+yaml"} {
		if len(mt) > len(suffix) && strings.EqualFold(mt[len(mt)-len(suffix):], suffix) {
			return true
		}
	}
	return false
}

var textTypes = []string{
	"application/json", "application/javascript", "application/ecmascript",
	"application/xml", "application/x-www-form-urlencoded", "application/yaml",
	"application/x-yaml", "application/graphql", "application/x-ndjson",
}
