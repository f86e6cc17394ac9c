package compare

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/lmigo/lmigo/concurrent"
	"github.com/lmigo/lmigo/concurrent/lambdahttp"
)

// apiProxy serves payload through api-proxy's adapter for door ("REST",
// "2.0", "ALB") and returns its answer as aws-lambda-go would encode it.
func apiProxy(t *testing.T, door string, h http.Handler, payload []byte) ([]byte, error) {
	t.Helper()
	ctx := context.Background()
	var res any
	var err error
	switch door {
	case "REST":
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			t.Fatal(err)
		}
		res, err = httpadapter.New(h).ProxyWithContext(ctx, ev)
	case "2.0":
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			t.Fatal(err)
		}
		res, err = httpadapter.NewV2(h).ProxyWithContext(ctx, ev)
	case "ALB":
		var ev events.ALBTargetGroupRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			t.Fatal(err)
		}
		res, err = httpadapter.NewALB(h).ProxyWithContext(ctx, ev)
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return b, nil
}

func lmigoAnswer(t *testing.T, h http.Handler, payload []byte) []byte {
	t.Helper()
	var out concurrent.Buffer
	if err := lambdahttp.Handler(h)(context.Background(), payload, &out); err != nil {
		t.Fatal(err)
	}
	return out.B
}

// answering writes a status, repeated headers, two cookies and a body.
var answering = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("X-Two", "a")
	w.Header().Add("X-Two", "b")
	http.SetCookie(w, &http.Cookie{Name: "s", Value: "1", Path: "/"})
	http.SetCookie(w, &http.Cookie{Name: "t", Value: "2"})
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, "created "+r.URL.Path)
})

// TestAPIProxySameAnswer: where api-proxy's answer conforms to the door's
// format (REST, HTTP API 2.0, Function URL, ALB in multi-value mode), the
// client reads from lambdahttp's the status, headers, cookies and body it
// reads from api-proxy's.
func TestAPIProxySameAnswer(t *testing.T) {
	for _, tc := range []struct{ name, door, event string }{
		{"REST", "REST", "apigw-request.json"},
		{"HTTP API 2.0", "2.0", "apigw-v2-request-no-authorizer.json"},
		{"Function URL", "2.0", "lambda-urls-request.json"},
		{"ALB multi-value", "ALB", "alb-lambda-target-request-multivalue-headers.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := awsEvent(t, tc.event)
			theirs, err := apiProxy(t, tc.door, answering, p)
			if err != nil {
				t.Fatal(err)
			}
			ws, wh, wb := clientView(t, theirs)
			gs, gh, gb := clientView(t, lmigoAnswer(t, answering, p))
			if gs != ws || gb != wb || indent(gh) != indent(wh) {
				t.Errorf("lambdahttp: %d %v %q\napi-proxy:  %d %v %q", gs, gh, gb, ws, wh, wb)
			}
		})
	}
}

// TestAPIProxyDepartures: where api-proxy departs from AWS's format,
// what its client gets, beside lambdahttp's.
func TestAPIProxyDepartures(t *testing.T) {
	t.Run("ALB single-value: no headers reach the client", func(t *testing.T) {
		p := awsEvent(t, "alb-lambda-target-request-headers-only.json")
		theirs, err := apiProxy(t, "ALB", answering, p)
		if err != nil {
			t.Fatal(err)
		}
		var a events.ALBTargetGroupResponse // single-value mode: the load balancer reads headers alone
		_ = json.Unmarshal(theirs, &a)
		var ours events.ALBTargetGroupResponse
		_ = json.Unmarshal(lmigoAnswer(t, answering, p), &ours)
		if len(a.Headers) != 0 || ours.Headers["X-Two"] != "a,b" || ours.Headers["Set-Cookie"] != "s=1; Path=/" {
			t.Errorf("api-proxy headers %v (multiValueHeaders %v); lambdahttp %v", a.Headers, a.MultiValueHeaders, ours.Headers)
		}
		if a.StatusDescription != "Created" || ours.StatusDescription != "201 Created" {
			t.Errorf("statusDescription: api-proxy %q, lambdahttp %q", a.StatusDescription, ours.StatusDescription)
		}
	})
	t.Run("ALB: query values decoded once more", func(t *testing.T) {
		p := ownEvent(t, "alb-encoded.json")
		var seen, theirs string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = r.URL.Query().Get("myKey")
			w.WriteHeader(http.StatusNoContent)
		})
		if _, err := apiProxy(t, "ALB", h, p); err != nil {
			t.Fatal(err)
		}
		theirs = seen
		lmigoAnswer(t, h, p)
		if theirs != "%3FshowAll%3Dtrue" || seen != "?showAll=true" {
			t.Errorf("myKey: api-proxy %q, lambdahttp %q; the client sent ?myKey=%%3FshowAll%%3Dtrue", theirs, seen)
		}
	})
	t.Run("ALB multi-value: no Host", func(t *testing.T) {
		p := ownEvent(t, "alb-multi.json")
		var host string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { host = r.Host; w.WriteHeader(http.StatusNoContent) })
		if _, err := apiProxy(t, "ALB", h, p); err != nil {
			t.Fatal(err)
		}
		theirs := host
		lmigoAnswer(t, h, p)
		if theirs != "" || host != "alb.example.com" {
			t.Errorf("Host: api-proxy %q, lambdahttp %q", theirs, host)
		}
	})
	t.Run("a handler that writes nothing", func(t *testing.T) {
		nothing := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		for door, event := range map[string]string{"REST": "apigw-request.json", "2.0": "lambda-urls-request.json", "ALB": "alb-lambda-target-request-headers-only.json"} {
			p := awsEvent(t, event)
			_, err := apiProxy(t, door, nothing, p)
			status, _, body := clientView(t, lmigoAnswer(t, nothing, p))
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "status code not set") || status != 200 || body != "" {
				t.Errorf("%s: api-proxy %v; lambdahttp %d %q", door, err, status, body)
			}
		}
	})
}

func indent(v any) string {
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}
