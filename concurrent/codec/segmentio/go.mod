module github.com/lmigo/lmigo/concurrent/codec/segmentio

go 1.26

require (
	github.com/lmigo/lmigo v0.1.0
	github.com/segmentio/encoding v0.5.4
)

require (
	github.com/segmentio/asm v1.1.3 // indirect
	golang.org/x/sys v0.46.0 // indirect
)

replace github.com/lmigo/lmigo => ../../../
