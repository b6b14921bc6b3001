package changingweb

// Hot reports whether page changes at the hot rate.
func (w *Web) Hot(page int) bool { return w.hot[page] }

// Fetches returns how many times page was served (200 or 304).
func (w *Web) Fetches(page int) int64 { return w.fetches[page].Load() }
