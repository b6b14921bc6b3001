package httpserver

// Conns is the number of connections open (0 without a cap: they are not
// counted).
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.lns {
		n += l.Conns()
	}
	return n
}
