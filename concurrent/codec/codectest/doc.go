// Package codectest holds no code, only the tests of the JSON codecs under
// concurrent/codec against the default codec, through the public API
// (concurrent.NewHandler with WithCodec). It is a module of its own so that
// the runtime's module does not require the codecs' libraries to test
// them: all four are linked here, side by side, as the probes and the
// benchmark compare them in one run.
package codectest
