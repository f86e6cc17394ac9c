// Package compare sets lambdahttp beside aws-lambda-go-api-proxy's
// httpadapter and the routers Go teams serve (chi, gin), in a module of
// its own so that the runtime's module requires none of them: each front
// door's event routed by ServeMux, chi and gin as net/http.Server routes
// the client's own request (TestRoutersPerDoor); api-proxy's answers where
// they conform to AWS's format, and where they do not
// (TestAPIProxySameAnswer, TestAPIProxyDepartures); and the benchmarks.
package compare
