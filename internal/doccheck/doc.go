// Package doccheck holds the test that keeps the module's doc comments in
// step with what they document: each exported identifier's comment begins
// with its name, as go doc and pkg.go.dev show it.
package doccheck
