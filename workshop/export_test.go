package workshop

// Live reports whether name holds a screen on s that has not closed yet
// (claimed in the room, its run not closed).
func (s *Server) Live(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[name]
}
