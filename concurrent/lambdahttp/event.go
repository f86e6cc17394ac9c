package lambdahttp

import (
	"encoding/json"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// door is the front door an event came through, told by its shape.
type door uint8

const (
	doorNone     door = iota
	doorREST          // API Gateway REST API, payload 1.0 (no version member)
	doorHTTPv1        // API Gateway HTTP API, payload 1.0 ("version": "1.0")
	doorHTTPv2        // API Gateway HTTP API, payload 2.0
	doorURL           // Lambda Function URL (payload 2.0, a lambda-url domain)
	doorALB           // Application Load Balancer, single-value headers
	doorALBMulti      // Application Load Balancer, multi-value headers
)

var doorNames = [...]string{"none", "REST API", "HTTP API 1.0", "HTTP API 2.0", "Function URL", "ALB", "ALB multi-value"}

func (d door) String() string { return doorNames[d] }

// v1 reports whether the door speaks payload format 1.0 (REST, HTTP API 1.0).
func (d door) v1() bool { return d == doorREST || d == doorHTTPv1 }

// v2 reports whether the door speaks payload format 2.0.
func (d door) v2() bool { return d == doorHTTPv2 || d == doorURL }

// alb reports whether the door is a load balancer.
func (d door) alb() bool { return d == doorALB || d == doorALBMulti }

// streamed reports whether StreamingHandler streams the answer to ev: a
// REST API or a Function URL. An HTTP API does not stream: its 2.0 events
// are told from a Function URL's by their domain (execute-api); one on a
// custom domain is streamed as a Function URL's.
func (ev *event) streamed() bool {
	switch ev.door {
	case doorREST, doorURL:
		return true
	case doorHTTPv2:
		return !strings.Contains(ev.RequestContext.DomainName, ".execute-api.")
	}
	return false
}

// event is the payload of any front door, decoded in one pass: the members
// of every door's event side by side. The 2.0 event is embedded so that
// Request returns it without a copy; the requestContext member is the
// union below, and proxy and alb are filled from the union once the door
// is known.
type event struct {
	events.APIGatewayV2HTTPRequest

	RequestContext eventContext `json:"requestContext"`

	// Payload 1.0 and ALB.
	Resource                        string              `json:"resource"`
	Path                            string              `json:"path"`
	HTTPMethod                      string              `json:"httpMethod"`
	MultiValueHeaders               map[string][]string `json:"multiValueHeaders"`
	MultiValueQueryStringParameters map[string][]string `json:"multiValueQueryStringParameters"`

	// Authorizer events carry a type; no request event does.
	Type string `json:"type"`

	door  door
	proxy events.APIGatewayProxyRequest `json:"-"`
	alb   events.ALBTargetGroupRequest  `json:"-"`
}

// eventContext is the union of the requestContext members of the doors.
// authorizer differs in shape between 1.0 and 2.0: it is kept as JSON and
// decoded into the door's type.
type eventContext struct {
	events.APIGatewayV2HTTPRequestContext

	Authorizer json.RawMessage `json:"authorizer"`

	// Payload 1.0.
	ResourceID        string                           `json:"resourceId"`
	OperationName     string                           `json:"operationName"`
	ExtendedRequestID string                           `json:"extendedRequestId"`
	Protocol          string                           `json:"protocol"`
	Identity          events.APIGatewayRequestIdentity `json:"identity"`
	ResourcePath      string                           `json:"resourcePath"`
	Path              string                           `json:"path"`
	HTTPMethod        string                           `json:"httpMethod"`
	RequestTime       string                           `json:"requestTime"`
	RequestTimeEpoch  int64                            `json:"requestTimeEpoch"`

	// ALB.
	ELB *events.ELBContext `json:"elb"`

	// WebSocket APIs.
	ConnectionID string `json:"connectionId"`
}

// decodeEvent decodes payload and tells its door. A payload that is not
// the event of an HTTP front door fails with an *EventError.
func decodeEvent(payload []byte) (*event, error) {
	ev := new(event)
	if err := json.Unmarshal(payload, ev); err != nil {
		return nil, &EventError{Reason: "it does not decode", Err: err}
	}
	rc := &ev.RequestContext
	switch {
	case ev.Type != "":
		return nil, &EventError{Reason: "an authorizer event"}
	case rc.ConnectionID != "":
		return nil, &EventError{Reason: "a WebSocket event"}
	case rc.ELB != nil:
		ev.door = doorALB
		if ev.MultiValueHeaders != nil || ev.MultiValueQueryStringParameters != nil {
			ev.door = doorALBMulti
		}
	case ev.Version == "2.0" || rc.HTTP.Method != "":
		ev.door = doorHTTPv2
		if strings.Contains(rc.DomainName, ".lambda-url.") {
			ev.door = doorURL
		}
	case ev.HTTPMethod != "":
		ev.door = doorREST
		if ev.Version == "1.0" {
			ev.door = doorHTTPv1
		}
	default:
		return nil, &EventError{Reason: "it has no httpMethod, requestContext.http.method or requestContext.elb"}
	}
	if err := ev.fill(); err != nil {
		return nil, &EventError{Reason: "its requestContext.authorizer does not decode", Err: err}
	}
	return ev, nil
}

// fill builds the door's own event type from the union.
func (ev *event) fill() error {
	rc := &ev.RequestContext
	switch {
	case ev.door.v2():
		ev.APIGatewayV2HTTPRequest.RequestContext = rc.APIGatewayV2HTTPRequestContext
		if len(rc.Authorizer) > 0 && string(rc.Authorizer) != "null" {
			a := new(events.APIGatewayV2HTTPRequestContextAuthorizerDescription)
			if err := json.Unmarshal(rc.Authorizer, a); err != nil {
				return err
			}
			ev.APIGatewayV2HTTPRequest.RequestContext.Authorizer = a
		}
	case ev.door.v1():
		p := &ev.proxy
		*p = events.APIGatewayProxyRequest{
			Resource: ev.Resource, Path: ev.Path, HTTPMethod: ev.HTTPMethod,
			Headers: ev.Headers, MultiValueHeaders: ev.MultiValueHeaders,
			QueryStringParameters:           ev.QueryStringParameters,
			MultiValueQueryStringParameters: ev.MultiValueQueryStringParameters,
			PathParameters:                  ev.PathParameters, StageVariables: ev.StageVariables,
			Body: ev.Body, IsBase64Encoded: ev.IsBase64Encoded,
			RequestContext: events.APIGatewayProxyRequestContext{
				AccountID: rc.AccountID, ResourceID: rc.ResourceID, OperationName: rc.OperationName,
				Stage: rc.Stage, DomainName: rc.DomainName, DomainPrefix: rc.DomainPrefix,
				RequestID: rc.RequestID, ExtendedRequestID: rc.ExtendedRequestID, Protocol: rc.Protocol,
				Identity: rc.Identity, ResourcePath: rc.ResourcePath, Path: rc.Path,
				HTTPMethod: rc.HTTPMethod, RequestTime: rc.RequestTime, RequestTimeEpoch: rc.RequestTimeEpoch,
				APIID: rc.APIID,
			},
		}
		if len(rc.Authorizer) > 0 && string(rc.Authorizer) != "null" {
			return json.Unmarshal(rc.Authorizer, &p.RequestContext.Authorizer)
		}
	case ev.door.alb():
		ev.alb = events.ALBTargetGroupRequest{
			HTTPMethod: ev.HTTPMethod, Path: ev.Path,
			QueryStringParameters:           ev.QueryStringParameters,
			MultiValueQueryStringParameters: ev.MultiValueQueryStringParameters,
			Headers:                         ev.Headers, MultiValueHeaders: ev.MultiValueHeaders,
			RequestContext:  events.ALBTargetGroupRequestContext{ELB: *rc.ELB},
			IsBase64Encoded: ev.IsBase64Encoded, Body: ev.Body,
		}
	}
	return nil
}
