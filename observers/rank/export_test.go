package rank

// SetMaxWrites sets how many page rows one block run writes, for tests; it
// returns a function restoring the default.
func SetMaxWrites(n int) func() {
	old := maxWrites
	maxWrites = n
	return func() { maxWrites = old }
}
