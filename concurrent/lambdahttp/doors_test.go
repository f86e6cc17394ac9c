package lambdahttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"go/build"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// awsEvent reads one of aws-lambda-go's own test events
// (github.com/aws/aws-lambda-go/events/testdata), as the module cache
// holds it.
func awsEvent(t testing.TB, name string) []byte {
	t.Helper()
	pkg, err := build.Import("github.com/aws/aws-lambda-go/events", ".", build.FindOnly)
	if err != nil {
		t.Fatalf("aws-lambda-go's events: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(pkg.Dir, "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ownEvent reads an event of testdata/events, written from AWS's
// documented formats.
func ownEvent(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seen is what an http.Handler sees of a request.
type seen struct {
	Method, URL, Path, RawPath, EscapedPath, RawQuery, RequestURI string
	Query                                                         map[string][]string
	Header                                                        http.Header
	Host, RemoteAddr, Proto                                       string
	ContentLength                                                 int64
	Body                                                          string
	Door                                                          string // which accessor returned the event
}

// recorder is an http.Handler that records what it sees into *got.
func recorder(got *seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*got = seen{
			Method: r.Method, URL: r.URL.String(), Path: r.URL.Path, RawPath: r.URL.RawPath,
			EscapedPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, RequestURI: r.RequestURI,
			Query: r.URL.Query(), Header: r.Header, Host: r.Host, RemoteAddr: r.RemoteAddr, Proto: r.Proto,
			ContentLength: r.ContentLength, Body: string(b), Door: doorOf(r.Context()),
		}
		_, _ = io.WriteString(w, "seen")
	})
}

// doorOf says which accessor returns the invocation's event.
func doorOf(ctx context.Context) string {
	var doors []string
	if ev := lambdahttp.Request(ctx); ev != nil {
		doors = append(doors, "2.0 "+ev.RequestContext.RequestID)
	}
	if ev := lambdahttp.ProxyRequest(ctx); ev != nil {
		doors = append(doors, "1.0 "+ev.RequestContext.RequestID)
	}
	if ev := lambdahttp.ALBRequest(ctx); ev != nil {
		doors = append(doors, "ALB "+ev.RequestContext.ELB.TargetGroupArn)
	}
	return strings.Join(doors, "+")
}

// doorCase is an event of one front door and what the router must see.
type doorCase struct {
	name    string
	payload func(testing.TB) []byte
	want    seen
}

func doorCases() []doorCase {
	aws := func(name string) func(testing.TB) []byte {
		return func(t testing.TB) []byte { return awsEvent(t, name) }
	}
	own := func(name string) func(testing.TB) []byte {
		return func(t testing.TB) []byte { return ownEvent(t, name) }
	}
	return []doorCase{
		{"REST", aws("apigw-request.json"), seen{
			Method: "POST", URL: "https://gy415nuibc.execute-api.us-east-1.amazonaws.com/hello/world?name=me",
			Path: "/hello/world", EscapedPath: "/hello/world", RawQuery: "name=me", RequestURI: "/hello/world?name=me",
			Query: map[string][]string{"name": {"me"}},
			Header: http.Header{
				"Accept": {"*/*"}, "Accept-Encoding": {"gzip, deflate"}, "Cache-Control": {"no-cache"},
				"Cloudfront-Forwarded-Proto": {"https"}, "Cloudfront-Is-Desktop-Viewer": {"true"},
				"Cloudfront-Is-Mobile-Viewer": {"false"}, "Cloudfront-Is-Smarttv-Viewer": {"false"},
				"Cloudfront-Is-Tablet-Viewer": {"false"}, "Cloudfront-Viewer-Country": {"US"},
				"Content-Type": {"application/json"}, "Headername": {"headerValue"},
				"Postman-Token": {"9f583ef0-ed83-4a38-aef3-eb9ce3f7a57f"}, "User-Agent": {"PostmanRuntime/2.4.5"},
				"Via":             {"1.1 d98420743a69852491bbdea73f7680bd.cloudfront.net (CloudFront)"},
				"X-Amz-Cf-Id":     {"pn-PWIJc6thYnZm5P0NMgOUglL1DYtl0gdeJky8tqsg8iS_sgsKD1A=="},
				"X-Forwarded-For": {"54.240.196.186, 54.182.214.83"}, "X-Forwarded-Port": {"443"}, "X-Forwarded-Proto": {"https"},
			},
			Host: "gy415nuibc.execute-api.us-east-1.amazonaws.com", RemoteAddr: "192.168.196.186", Proto: "HTTP/1.1",
			ContentLength: 13, Body: "{\r\n\t\"a\": 1\r\n}", Door: "1.0 deef4878-7910-11e6-8f14-25afc3e9ae33",
		}},
		{"REST encoded", own("rest-encoded.json"), seen{
			Method: "PUT", URL: "https://abc123.execute-api.eu-west-1.amazonaws.com/files/a%2Fb/caf%C3%A9%20au%20lait?q=1&tag=a+b&tag=c%26d&tag=%C3%A9",
			Path: "/files/a/b/café au lait", RawPath: "/files/a%2Fb/caf%C3%A9%20au%20lait", EscapedPath: "/files/a%2Fb/caf%C3%A9%20au%20lait",
			RawQuery: "q=1&tag=a+b&tag=c%26d&tag=%C3%A9", RequestURI: "/files/a%2Fb/caf%C3%A9%20au%20lait?q=1&tag=a+b&tag=c%26d&tag=%C3%A9",
			Query:  map[string][]string{"q": {"1"}, "tag": {"a b", "c&d", "é"}},
			Header: http.Header{"Accept": {"text/html", "application/json"}, "Cookie": {"session=s1; theme=dark"}, "X-Empty": {""}},
			Host:   "abc123.execute-api.eu-west-1.amazonaws.com", RemoteAddr: "203.0.113.9", Proto: "HTTP/1.1",
			ContentLength: 5, Body: "\x00\x01\x02\xfe\xff", Door: "1.0 c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
		}},
		{"HTTP API 1.0", own("httpapi-v1.json"), seen{
			Method: "GET", URL: "https://id.execute-api.us-east-1.amazonaws.com/my/path%20with%20space/100%25?parameter1=value1&parameter1=value2&parameter2=value",
			Path: "/my/path with space/100%", EscapedPath: "/my/path%20with%20space/100%25",
			RawQuery: "parameter1=value1&parameter1=value2&parameter2=value", RequestURI: "/my/path%20with%20space/100%25?parameter1=value1&parameter1=value2&parameter2=value",
			Query:  map[string][]string{"parameter1": {"value1", "value2"}, "parameter2": {"value"}},
			Header: http.Header{"Header1": {"value1"}, "Header2": {"value1", "value2"}, "Cookie": {"c1=v1; c2=v2"}},
			Host:   "id.execute-api.us-east-1.amazonaws.com", RemoteAddr: "192.0.2.1", Proto: "HTTP/1.1",
			ContentLength: 12, Body: "Hello from 1", Door: "1.0 id",
		}},
		{"HTTP API 2.0", aws("apigw-v2-request-no-authorizer.json"), seen{
			Method: "GET", URL: "https://aaaaaaaaaa.execute-api.us-west-2.amazonaws.com/", Path: "/", EscapedPath: "/", RequestURI: "/",
			Query: map[string][]string{},
			Header: http.Header{"Accept": {"*/*"}, "Content-Length": {"0"}, "User-Agent": {"curl/7.58.0"},
				"X-Amzn-Trace-Id": {"Root=1-5e9f0c65-1de4d666d4dd26aced652b6c"}, "X-Forwarded-For": {"1.2.3.4"},
				"X-Forwarded-Port": {"443"}, "X-Forwarded-Proto": {"https"}},
			Host: "aaaaaaaaaa.execute-api.us-west-2.amazonaws.com", RemoteAddr: "1.2.3.4", Proto: "HTTP/1.1",
			Door: "2.0 LV7fzho-PHcEJPw=",
		}},
		{"HTTP API 2.0 literal %", own("httpapi-v2-percent.json"), seen{
			Method: "GET", URL: "https://r3pmxmplak.execute-api.us-east-2.amazonaws.com/discount/100%25?code=a%20b&code=%25",
			Path: "/discount/100%", EscapedPath: "/discount/100%25", RawQuery: "code=a%20b&code=%25", RequestURI: "/discount/100%25?code=a%20b&code=%25",
			Query:  map[string][]string{"code": {"a b", "%"}},
			Header: http.Header{"Accept": {"application/json"}, "Cookie": {"a=1; b=2"}},
			Host:   "r3pmxmplak.execute-api.us-east-2.amazonaws.com", RemoteAddr: "198.51.100.7", Proto: "HTTP/2.0",
			Door: "2.0 JKJaXmPLvHcESHA=",
		}},
		{"Function URL", aws("lambda-urls-request.json"), seen{
			Method: "POST", URL: "https://<url-id>.lambda-url.us-west-2.on.aws/my/path?parameter1=value1&parameter1=value2&parameter2=value",
			Path: "/my/path", EscapedPath: "/my/path", RawQuery: "parameter1=value1&parameter1=value2&parameter2=value",
			RequestURI: "/my/path?parameter1=value1&parameter1=value2&parameter2=value",
			Query:      map[string][]string{"parameter1": {"value1", "value2"}, "parameter2": {"value"}},
			Header:     http.Header{"Header1": {"value1"}, "Header2": {"value1,value2"}, "Cookie": {"cookie1; cookie2"}},
			Host:       "<url-id>.lambda-url.us-west-2.on.aws", RemoteAddr: "123.123.123.123", Proto: "HTTP/1.1",
			ContentLength: 18, Body: "Hello from client!", Door: "2.0 id",
		}},
		{"ALB", aws("alb-lambda-target-request-headers-only.json"), seen{
			Method: "GET", URL: "http://lambda-test-alb-1334523864.us-east-1.elb.amazonaws.com/?key=hello",
			Path: "/", EscapedPath: "/", RawQuery: "key=hello", RequestURI: "/?key=hello",
			Query: map[string][]string{"key": {"hello"}},
			Header: http.Header{"Accept": {"*/*"}, "Connection": {"keep-alive"}, "User-Agent": {"curl/7.54.0"},
				"X-Amzn-Trace-Id": {"Root=1-5c34e93e-4dea0086f9763ac0667b115a"}, "X-Forwarded-For": {"25.12.198.67"},
				"X-Forwarded-Port": {"80"}, "X-Forwarded-Proto": {"http"}, "X-Imforwards": {"20"}, "X-Myheader": {"123"}},
			Host: "lambda-test-alb-1334523864.us-east-1.elb.amazonaws.com", RemoteAddr: "25.12.198.67", Proto: "HTTP/1.1",
			Door: "ALB arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/lambda-target/abcdefg",
		}},
		{"ALB encoded query", own("alb-encoded.json"), seen{
			Method: "POST", URL: "https://alb.example.com/search/caf%C3%A9?myKey=%3FshowAll%3Dtrue&q=a+b",
			Path: "/search/café", RawPath: "", EscapedPath: "/search/caf%C3%A9", RawQuery: "myKey=%3FshowAll%3Dtrue&q=a+b",
			RequestURI: "/search/caf%C3%A9?myKey=%3FshowAll%3Dtrue&q=a+b",
			Query:      map[string][]string{"myKey": {"?showAll=true"}, "q": {"a b"}},
			Header:     http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Forwarded-For": {"192.0.2.60, 198.51.100.3"}, "X-Forwarded-Proto": {"https"}},
			Host:       "alb.example.com", RemoteAddr: "198.51.100.3", Proto: "HTTP/1.1",
			ContentLength: 7, Body: "a=1&b=2", Door: "ALB arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/web/0123456789abcdef",
		}},
		{"ALB multi-value", aws("alb-lambda-target-request-multivalue-headers.json"), seen{
			Method: "GET", URL: "http://lambda-test-alb-1234567.us-east-1.elb.amazonaws.com/?key=hello",
			Path: "/", EscapedPath: "/", RawQuery: "key=hello", RequestURI: "/?key=hello",
			Query: map[string][]string{"key": {"hello"}},
			Header: http.Header{"Accept": {"*/*"}, "Connection": {"keep-alive"}, "User-Agent": {"curl/7.54.0"},
				"X-Amzn-Trace-Id": {"Root=1-5c34e7d4-00ca239424b68028d4c56d68"}, "X-Forwarded-For": {"72.21.198.67"},
				"X-Forwarded-Port": {"80"}, "X-Forwarded-Proto": {"http"}, "X-Imforwards": {"20"}, "X-Myheader": {"123"}},
			Host: "lambda-test-alb-1234567.us-east-1.elb.amazonaws.com", RemoteAddr: "72.21.198.67", Proto: "HTTP/1.1",
			Door: "ALB arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/lambda-target/abcdefgh",
		}},
		{"ALB multi-value repeated", own("alb-multi.json"), seen{
			Method: "DELETE", URL: "https://alb.example.com/items/7?id=1&id=2&id=%2F",
			Path: "/items/7", EscapedPath: "/items/7", RawQuery: "id=1&id=2&id=%2F", RequestURI: "/items/7?id=1&id=2&id=%2F",
			Query:  map[string][]string{"id": {"1", "2", "/"}},
			Header: http.Header{"Cookie": {"a=1", "b=2"}, "X-Forwarded-For": {"192.0.2.77"}, "X-Forwarded-Proto": {"https"}, "X-Trace": {"one", "two"}},
			Host:   "alb.example.com", RemoteAddr: "192.0.2.77", Proto: "HTTP/1.1",
			Door: "ALB arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/web/0123456789abcdef",
		}},
	}
}

// TestDoorRequests: for each front door's event, the request the
// http.Handler sees, field by field, buffered and streamed.
func TestDoorRequests(t *testing.T) {
	for _, tc := range doorCases() {
		t.Run(tc.name, func(t *testing.T) {
			var got seen
			var out concurrent.Buffer
			if err := lambdahttp.Handler(recorder(&got))(context.Background(), tc.payload(t), &out); err != nil {
				t.Fatal(err)
			}
			checkSeen(t, "buffered", got, tc.want)
			got = seen{}
			if _, err := lambdahttp.StreamingHandler(recorder(&got)).Invoke(context.Background(), tc.payload(t)); err != nil {
				t.Fatal(err)
			}
			checkSeen(t, "streamed", got, tc.want)
		})
	}
}

func checkSeen(t *testing.T, mode string, got, want seen) {
	t.Helper()
	g, w := indented(got), indented(want)
	if g != w {
		gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
		var diff []string
		for _, l := range wl {
			if !slices.Contains(gl, l) {
				diff = append(diff, "want "+l)
			}
		}
		for _, l := range gl {
			if !slices.Contains(wl, l) {
				diff = append(diff, " got "+l)
			}
		}
		t.Errorf("%s: the handler saw another request:\n%s", mode, strings.Join(diff, "\n"))
	}
}

// indented is v as indented JSON, HTML left as it is.
func indented(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	_ = enc.Encode(v)
	return b.String()
}

// TestServeMuxRoutes: a ServeMux routes each door's request by method and
// path, wildcards taking the decoded segment.
func TestServeMuxRoutes(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hello/{who}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello "+r.PathValue("who")) })
	mux.HandleFunc("PUT /files/{name...}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "file "+r.PathValue("name")) })
	mux.HandleFunc("GET /discount/{pct}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "discount "+r.PathValue("pct")) })
	mux.HandleFunc("GET /my/{rest...}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "my "+r.PathValue("rest")) })
	mux.HandleFunc("POST /search/{term}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "search "+r.PathValue("term")) })
	mux.HandleFunc("DELETE /items/{id}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "delete "+r.PathValue("id")) })
	want := map[string]string{
		"REST": "hello world", "REST encoded": "file a/b/café au lait", "HTTP API 1.0": "my path with space/100%",
		"HTTP API 2.0 literal %": "discount 100%", "ALB encoded query": "search café", "ALB multi-value repeated": "delete 7",
	}
	for _, tc := range doorCases() {
		w, ok := want[tc.name]
		if !ok {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := clientReads(t, mux, tc.payload(t))
			if status != http.StatusOK || body != w {
				t.Errorf("%d %q, want 200 %q", status, body, w)
			}
		})
	}
}
