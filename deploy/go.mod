module github.com/lmigo/lmigo/deploy

go 1.26

require gopkg.in/yaml.v3 v3.0.1

require (
	github.com/aws/aws-lambda-go v1.55.1 // indirect
	github.com/lmigo/lmigo v0.0.0 // indirect
	github.com/panjf2000/ants/v2 v2.12.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/sync v0.16.0 // indirect
)

replace github.com/lmigo/lmigo => ../

// pack builds the reference bootstrap by its package path: as a tool,
// lmigo stays required, and the build finds it.
tool github.com/lmigo/lmigo/cmd/bootstrap
