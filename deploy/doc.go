// Package deploy holds what ships lmigo to Lambda Managed Instances:
// template.yaml, a SAM template for a capacity provider and a function on
// it (arm64 or x86_64). The zips it deploys are built by lmigo-pack, a
// command of the runtime's module (`make package`). The package has no code
// of its own; its test checks the template against the resource and
// property names it relies on, and checks the same way the template that
// docs/deploy.md shows for a user's own function.
package deploy
