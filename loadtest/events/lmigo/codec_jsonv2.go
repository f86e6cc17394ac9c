//go:build codec_jsonv2

package main

import _ "github.com/lmigo/lmigo/concurrent/codec/jsonv2"
