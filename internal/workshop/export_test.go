package workshop

import (
	"context"
	"time"

	"github.com/rmlab/lab/internal/services"
)

// Live reports whether name holds a screen on s that has not closed yet
// (claimed in the room, its run not closed).
func (s *Server) Live(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[name] != ""
}

// SlowToClose makes every screen of s take d more to close before its
// claim is released, as a run with workers to kill does.
func (s *Server) SlowToClose(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeRelease = func() { time.Sleep(d) }
}

// BeforeClose runs f in Shutdown after every session ended, before the
// connections close.
func (s *Server) BeforeClose(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeClose = f
}

// ParticipantServices are the services participant name's screen runs on.
func (s *Server) ParticipantServices(ctx context.Context, name string) (*services.Services, func(), error) {
	return s.participantServices(ctx, name)
}

// SafeName is how the server's log and refusals write a name a client sent.
var SafeName = safeName
