// Package compare benchmarks lambdahttp beside aws-lambda-go-api-proxy's
// httpadapter, in a module of its own so that the runtime's module does not
// require api-proxy and its dependencies.
package compare
