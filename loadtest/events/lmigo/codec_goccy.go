//go:build codec_goccy

package main

import _ "github.com/lmigo/lmigo/concurrent/codec/goccy"
