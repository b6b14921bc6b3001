// Package web renders the search UI and JSON API.
//
// Not built yet: see the project's issues (serving).
package web
