// Package filecalls measures how the files of one package call each
// other, for the tests that keep a package's files calling down: a story
// file over leaves that never call back up.
//
// A file calls another when a declaration of one calls, or takes as a
// value, a function or method declared in the other; types, constants and
// variables are not calls. An interface method counts where the interface
// is declared, not where a type implements it. Only the package's own
// files for this platform count, its tests left out.
package filecalls
