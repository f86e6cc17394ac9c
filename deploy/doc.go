// Package deploy holds what ships lmigo to Lambda Managed Instances:
// template.yaml, a SAM template for a capacity provider and a function on
// it (arm64 or x86_64), and, in pack, the command that builds the zips the
// template deploys (`make package`). The package has no code of its own;
// its test checks the template against the resource and property names it
// relies on.
package deploy
