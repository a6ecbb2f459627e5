package steps

import (
	"slices"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/services"
)

// needsBinlog reports whether a lesson reads the binary log.
func needsBinlog(l *lab.Lesson) bool {
	return l != nil && slices.ContainsFunc(l.Needs, func(c lab.Capability) bool {
		return slices.Contains(c.Alternatives(), lab.CapBinlog)
	})
}

// useServices points the rest of the run at svc (its MySQL on the lab's
// own server): sessions, ledgers, workers' LAB_MYSQL_DSN, and the screen's
// tables panel through Svc.
func (r *Run) useServices(svc *services.Services) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Env.Svc == svc {
		return
	}
	env := *r.Env
	env.Svc = svc
	r.Env = &env
}

// Svc is the services the run talks to now (the configured ones, or their
// twin on the lab's own MySQL server for a lesson that reads its binary
// log), for readers outside the run's steps.
func (r *Run) Svc() *services.Services {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Env == nil {
		return nil
	}
	return r.Env.Svc
}
