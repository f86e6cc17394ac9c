module github.com/lmigo/lmigo/concurrent/codec/jsonv2

go 1.26

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/lmigo/lmigo v0.1.0
)

replace github.com/lmigo/lmigo => ../../../
