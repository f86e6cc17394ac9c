// Package doccheck holds the test that keeps the module's doc comments in
// step with what they document: each identifier's comment, exported or
// not, begins with its name, as go doc and pkg.go.dev show it.
package doccheck
