package lambdahttp

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendHead appends the members statusCode, headers and cookies of a
// payload 2.0 answer's JSON object (without braces): headers sorted by
// name, each header's values joined by commas, Set-Cookie values as
// cookies, empty members left out, strings escaped as encoding/json's
// Marshal escapes them (HTML too). So the streamed prelude is byte for
// byte what aws-lambda-go's LambdaFunctionURLStreamingResponse writes for
// the same header.
func appendHead(dst []byte, status int, h http.Header) []byte {
	dst = appendStatus(dst, status)
	var keysArr [32]string
	var cookies []string
	n := 0 // headers so far
	for _, k := range sortedKeys(h, keysArr[:0]) {
		if isSetCookie(k) {
			cookies = h[k]
			continue
		}
		dst = appendMember(dst, "headers", n)
		n++
		dst = appendJoined(dst, k, h[k], len(h[k]))
	}
	if n > 0 {
		dst = append(dst, '}')
	}
	if len(cookies) > 0 {
		dst = append(dst, `,"cookies":`...)
		dst = appendStrings(dst, cookies)
	}
	return dst
}

// appendHeadV1 appends the members statusCode, headers and
// multiValueHeaders of a payload 1.0 answer (REST APIs, HTTP API 1.0):
// a header of one value in headers, Set-Cookie and a header of several
// values in multiValueHeaders, each value its own. With cookies (a REST
// API's streamed prelude, which has the member), Set-Cookie's values go
// in cookies instead, as in aws-lambda-go's
// APIGatewayProxyStreamingResponse.
func appendHeadV1(dst []byte, status int, h http.Header, cookies bool) []byte {
	dst = appendStatus(dst, status)
	var keysArr [32]string
	keys := sortedKeys(h, keysArr[:0])
	n := 0
	for _, k := range keys {
		if len(h[k]) == 1 && !isSetCookie(k) {
			dst = appendMember(dst, "headers", n)
			n++
			dst = appendJoined(dst, k, h[k], 1)
		}
	}
	if n > 0 {
		dst = append(dst, '}')
	}
	n = 0
	var setCookie []string
	for _, k := range keys {
		if cookies && isSetCookie(k) {
			setCookie = h[k]
			continue
		}
		if len(h[k]) > 1 || len(h[k]) == 1 && isSetCookie(k) {
			dst = appendMember(dst, "multiValueHeaders", n)
			n++
			dst = appendString(dst, k, true)
			dst = append(dst, ':')
			dst = appendStrings(dst, h[k])
		}
	}
	if n > 0 {
		dst = append(dst, '}')
	}
	if len(setCookie) > 0 {
		dst = append(dst, `,"cookies":`...)
		dst = appendStrings(dst, setCookie)
	}
	return dst
}

// appendHeadALB appends the members statusCode, statusDescription and
// headers (single-value mode) or multiValueHeaders (multi-value mode) of
// a load balancer's answer; the member is there even empty, as the load
// balancer requires it. In single-value mode a header's values are joined
// by commas, as HTTP allows (RFC 9110, 5.3), except Set-Cookie's, which
// cannot be: its first value alone goes.
func appendHeadALB(dst []byte, status int, h http.Header, multi bool) []byte {
	dst = appendStatus(dst, status)
	dst = append(dst, `,"statusDescription":"`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	if text := http.StatusText(status); text != "" {
		dst = append(dst, ' ')
		dst = append(dst, text...)
	}
	dst = append(dst, '"')
	if multi {
		dst = append(dst, `,"multiValueHeaders":{`...)
	} else {
		dst = append(dst, `,"headers":{`...)
	}
	var keysArr [32]string
	n := 0
	for _, k := range sortedKeys(h, keysArr[:0]) {
		vs := h[k]
		if len(vs) == 0 {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		switch {
		case multi:
			dst = appendString(dst, k, true)
			dst = append(dst, ':')
			dst = appendStrings(dst, vs)
		case isSetCookie(k):
			dst = appendJoined(dst, k, vs, 1)
		default:
			dst = appendJoined(dst, k, vs, len(vs))
		}
	}
	return append(dst, '}')
}

func appendStatus(dst []byte, status int) []byte {
	dst = append(dst, `"statusCode":`...)
	return strconv.AppendInt(dst, int64(status), 10)
}

// appendMember opens the object member name before its first entry (n
// is the entries so far) and separates the later ones.
func appendMember(dst []byte, name string, n int) []byte {
	if n > 0 {
		return append(dst, ',')
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	return append(dst, '"', ':', '{')
}

// sortedKeys returns h's names (those with no value too), sorted, in buf.
func sortedKeys(h http.Header, buf []string) []string {
	for k := range h {
		buf = append(buf, k)
	}
	slices.Sort(buf)
	return buf
}

// appendJoined appends "k":"v1,v2..." with the first n of vs.
func appendJoined(dst []byte, k string, vs []string, n int) []byte {
	dst = appendString(dst, k, true)
	dst = append(dst, ':', '"')
	for j, v := range vs[:min(n, len(vs))] {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = appendStringBody(dst, v, true)
	}
	return append(dst, '"')
}

// appendStrings appends vs as a JSON array of strings.
func appendStrings(dst []byte, vs []string) []byte {
	dst = append(dst, '[')
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, v, true)
	}
	return append(dst, ']')
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

// IsText is the default rule of [WithText]: a body is text, sent as a
// JSON string rather than in base64 (provided it is valid UTF-8), when it
// has no Content-Encoding (or identity) and its Content-Type is absent,
// text/*, JSON, XML, YAML, JavaScript, GraphQL, NDJSON, form-encoded, or
// ends in +json, +xml or +yaml.
func IsText(contentType, contentEncoding string) bool {
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
