package percolator

// Crash makes Serve stop, when its context is done, as a killed process
// does: without releasing the lease, which a standby then takes once it
// lapses.
func (s *OracleServer) Crash() { s.crash = true }
