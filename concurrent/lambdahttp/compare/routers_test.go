package compare

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"go/build"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// describe is what every route answers: what the router and the request
// gave it, as a router behind net/http.Server would see them.
func describe(w http.ResponseWriter, r *http.Request, route, params string) {
	b, _ := io.ReadAll(r.Body)
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	q := r.URL.Query()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range q {
			if !yield(k) {
				return
			}
		}
	})
	var query []string
	for _, k := range keys {
		query = append(query, fmt.Sprintf("%s=%q", k, q[k]))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Add("X-Route", route)
	fmt.Fprintf(w, "route=%s params=%s method=%s path=%q raw=%q query=%s host=%s cookies=%q accept=%q ct=%q body=%q",
		route, params, r.Method, r.URL.Path, r.URL.RawPath, strings.Join(query, ","), r.Host, cookies,
		r.Header.Values("Accept"), r.Header.Get("Content-Type"), b)
}

func serveMux() http.Handler {
	mux := http.NewServeMux()
	for _, route := range []string{"POST /hello/{who}", "PUT /files/{name...}", "GET /discount/{pct}", "GET /my/{rest...}",
		"POST /search/{term}", "DELETE /items/{id}", "GET /"} {
		mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
			var params []string
			for _, p := range []string{"who", "name", "pct", "rest", "term", "id"} {
				if v := r.PathValue(p); v != "" {
					params = append(params, p+"="+v)
				}
			}
			describe(w, r, route, strings.Join(params, ";"))
		})
	}
	return mux
}

func chiRouter() http.Handler {
	r := chi.NewRouter()
	add := func(method, pattern string, names ...string) {
		r.MethodFunc(method, pattern, func(w http.ResponseWriter, req *http.Request) {
			var params []string
			for _, n := range names {
				params = append(params, n+"="+chi.URLParam(req, n))
			}
			describe(w, req, method+" "+pattern, strings.Join(params, ";"))
		})
	}
	add("POST", "/hello/{who}", "who")
	add("PUT", "/files/*", "*")
	add("GET", "/discount/{pct}", "pct")
	add("GET", "/my/*", "*")
	add("POST", "/search/{term}", "term")
	add("DELETE", "/items/{id}", "id")
	add("GET", "/")
	return r
}

func ginRouter() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	add := func(method, pattern string, names ...string) {
		r.Handle(method, pattern, func(c *gin.Context) {
			var params []string
			for _, n := range names {
				params = append(params, n+"="+c.Param(n))
			}
			describe(c.Writer, c.Request, method+" "+pattern, strings.Join(params, ";"))
		})
	}
	add("POST", "/hello/:who", "who")
	add("PUT", "/files/*name", "name")
	add("GET", "/discount/:pct", "pct")
	add("GET", "/my/*rest", "rest")
	add("POST", "/search/:term", "term")
	add("DELETE", "/items/:id", "id")
	add("GET", "/")
	return r
}

func routers() map[string]http.Handler {
	return map[string]http.Handler{"ServeMux": serveMux(), "chi": chiRouter(), "gin": ginRouter()}
}

// wireCase is an event and the HTTP request its client sent, which the
// door turned into the event.
type wireCase struct {
	name    string
	event   func(testing.TB) []byte
	method  string
	target  string // as on the wire
	host    string
	headers [][2]string
	body    string
}

func wireCases() []wireCase {
	aws := func(name string) func(testing.TB) []byte {
		return func(t testing.TB) []byte { return awsEvent(t, name) }
	}
	own := func(name string) func(testing.TB) []byte {
		return func(t testing.TB) []byte { return ownEvent(t, name) }
	}
	return []wireCase{
		{"REST", aws("apigw-request.json"), "POST", "/hello/world?name=me", "gy415nuibc.execute-api.us-east-1.amazonaws.com",
			[][2]string{{"Accept", "*/*"}, {"Content-Type", "application/json"}}, "{\r\n\t\"a\": 1\r\n}"},
		{"REST encoded", own("rest-encoded.json"), "PUT", "/files/a%2Fb/caf%C3%A9%20au%20lait?q=1&tag=a+b&tag=c%26d&tag=%C3%A9",
			"abc123.execute-api.eu-west-1.amazonaws.com",
			[][2]string{{"Accept", "text/html"}, {"Accept", "application/json"}, {"Cookie", "session=s1; theme=dark"}}, "\x00\x01\x02\xfe\xff"},
		{"HTTP API 1.0", own("httpapi-v1.json"), "GET", "/my/path%20with%20space/100%25?parameter1=value1&parameter1=value2&parameter2=value",
			"id.execute-api.us-east-1.amazonaws.com", [][2]string{{"Cookie", "c1=v1; c2=v2"}}, "Hello from 1"},
		{"HTTP API 2.0", own("httpapi-v2-percent.json"), "GET", "/discount/100%25?code=a%20b&code=%25",
			"r3pmxmplak.execute-api.us-east-2.amazonaws.com", [][2]string{{"Accept", "application/json"}, {"Cookie", "a=1; b=2"}}, ""},
		{"Function URL", aws("lambda-urls-request.json"), "POST", "/my/path?parameter1=value1&parameter1=value2&parameter2=value",
			"<url-id>.lambda-url.us-west-2.on.aws", [][2]string{{"Cookie", "cookie1; cookie2"}}, "Hello from client!"},
		{"ALB", aws("alb-lambda-target-request-headers-only.json"), "GET", "/?key=hello",
			"lambda-test-alb-1334523864.us-east-1.elb.amazonaws.com", [][2]string{{"Accept", "*/*"}}, ""},
		{"ALB encoded", own("alb-encoded.json"), "POST", "/search/caf%C3%A9?myKey=%3FshowAll%3Dtrue&q=a+b", "alb.example.com",
			[][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}, "a=1&b=2"},
		{"ALB multi-value", own("alb-multi.json"), "DELETE", "/items/7?id=1&id=2&id=%2F", "alb.example.com",
			[][2]string{{"Cookie", "a=1"}, {"Cookie", "b=2"}}, ""},
	}
}

// overTheWire is what the router answers the client's own request behind
// net/http.Server.
func overTheWire(t *testing.T, h http.Handler, c wireCase) (int, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(c.method, srv.URL+c.target, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = c.host
	for _, kv := range c.headers {
		req.Header.Add(kv[0], kv[1])
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestRoutersPerDoor: ServeMux, chi and gin, served by lambdahttp.Handler
// behind each door, answer each door's event as they answer the client's
// own request behind net/http.Server: the same route, path parameters,
// path, query, Host, cookies, headers and body.
func TestRoutersPerDoor(t *testing.T) {
	for name, router := range routers() {
		for _, c := range wireCases() {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				wantStatus, wantBody := overTheWire(t, router, c)
				var out concurrent.Buffer
				if err := lambdahttp.Handler(router)(context.Background(), c.event(t), &out); err != nil {
					t.Fatal(err)
				}
				status, _, body := clientView(t, out.B)
				if status != wantStatus || body != wantBody {
					t.Errorf("behind the door:\n %d %s\nbehind net/http.Server:\n %d %s", status, body, wantStatus, wantBody)
				}
			})
		}
	}
}

// clientView reads an answer as the door's client would: 1.0 merges
// headers and multiValueHeaders, 2.0 adds cookies as Set-Cookie, a load
// balancer reads headers or multiValueHeaders, whichever it sent.
func clientView(t testing.TB, answer []byte) (int, http.Header, string) {
	t.Helper()
	var a struct {
		StatusCode        int                 `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Cookies           []string            `json:"cookies"`
		Body              string              `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		t.Fatalf("%v: %.200q", err, answer)
	}
	h := http.Header{}
	for k, v := range a.Headers {
		h[http.CanonicalHeaderKey(k)] = []string{v}
	}
	for k, vs := range a.MultiValueHeaders {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	for _, c := range a.Cookies {
		h.Add("Set-Cookie", c)
	}
	body := a.Body
	if a.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(a.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = string(b)
	}
	return a.StatusCode, h, body
}

// awsEvent reads one of aws-lambda-go's own test events.
func awsEvent(t testing.TB, name string) []byte {
	t.Helper()
	pkg, err := build.Import("github.com/aws/aws-lambda-go/events", ".", build.FindOnly)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(pkg.Dir, "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ownEvent reads an event of lambdahttp's testdata/events.
func ownEvent(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(b)
}
