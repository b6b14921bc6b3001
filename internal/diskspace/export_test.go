package diskspace

// Check looks at the free space now, updates the state and returns Err.
func (g *Guard) Check() error {
	g.look()
	return g.Err()
}
