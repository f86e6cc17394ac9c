module github.com/lmigo/lmigo/concurrent/codec/goccy

go 1.26

require (
	github.com/goccy/go-json v0.12.0
	github.com/lmigo/lmigo v0.1.0
)

replace github.com/lmigo/lmigo => ../../../
