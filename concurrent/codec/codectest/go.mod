module github.com/lmigo/lmigo/concurrent/codec/codectest

go 1.26

require (
	github.com/aws/aws-lambda-go v1.55.1
	github.com/lmigo/lmigo v0.1.0
	github.com/lmigo/lmigo/concurrent/codec/goccy v0.0.0
	github.com/lmigo/lmigo/concurrent/codec/jsonv2 v0.0.0
	github.com/lmigo/lmigo/concurrent/codec/segmentio v0.0.0
	github.com/lmigo/lmigo/concurrent/codec/sonic v0.0.0
)

require (
	github.com/bytedance/gopkg v0.1.3 // indirect
	github.com/bytedance/sonic v1.15.5 // indirect
	github.com/bytedance/sonic/loader v0.5.3 // indirect
	github.com/cloudwego/base64x v0.1.6 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/goccy/go-json v0.12.0 // indirect
	github.com/klauspost/cpuid/v2 v2.2.9 // indirect
	github.com/panjf2000/ants/v2 v2.12.1 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/twitchyliquid64/golang-asm v0.15.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/arch v0.0.0-20210923205945-b76863e36670 // indirect
	golang.org/x/sync v0.16.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
)

replace (
	github.com/lmigo/lmigo => ../../../
	github.com/lmigo/lmigo/concurrent/codec/goccy => ../goccy
	github.com/lmigo/lmigo/concurrent/codec/jsonv2 => ../jsonv2
	github.com/lmigo/lmigo/concurrent/codec/segmentio => ../segmentio
	github.com/lmigo/lmigo/concurrent/codec/sonic => ../sonic
)
