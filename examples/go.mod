module github.com/lmigo/lmigo/examples

go 1.26

require (
	github.com/aws/aws-lambda-go v1.55.1
	github.com/lmigo/lmigo v0.0.0
	go.uber.org/zap v1.28.0
)

require (
	github.com/panjf2000/ants/v2 v2.12.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/sync v0.16.0 // indirect
)

replace github.com/lmigo/lmigo => ../
