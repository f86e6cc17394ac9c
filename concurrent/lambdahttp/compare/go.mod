module github.com/lmigo/lmigo/concurrent/lambdahttp/compare

go 1.26

replace github.com/lmigo/lmigo => ../../../

require (
	github.com/aws/aws-lambda-go v1.55.1
	github.com/lmigo/lmigo v0.0.0-00010101000000-000000000000
)

require (
	github.com/awslabs/aws-lambda-go-api-proxy v0.16.2
	github.com/panjf2000/ants/v2 v2.12.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/sync v0.16.0 // indirect
)
