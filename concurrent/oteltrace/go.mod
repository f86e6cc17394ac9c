module github.com/lmigo/lmigo/concurrent/oteltrace

go 1.26.0

require go.opentelemetry.io/otel/trace v1.47.0

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
)

replace github.com/lmigo/lmigo => ../../
