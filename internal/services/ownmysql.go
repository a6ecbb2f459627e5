package services

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"github.com/rmlab/lab/internal/dbnode"
)

// ownMySQL is the lab's own MySQL-compatible server with a row-based
// binary log (package dbnode): started the first time a lesson that needs
// one resets where the configured server writes none, then shared by every
// run of the process, each in its own namespace's databases, and stopped
// with the process (StopOwnMySQL; the kernel kills it if the lab dies).
var ownMySQL struct {
	mu   sync.Mutex
	node *dbnode.Node
	root *sql.DB // the server's administrator: participants' logins, their Watch
	// svcs is each configured Services' twin on the own server: the same
	// namespace, Redis and broker, MySQL there.
	svcs map[*Services]*Services
}

// WithBinlog is s itself when its server writes a row-based binary log,
// else its twin on the lab's own server, started on first use; the note
// says which, for a reset's output.
func (s *Services) WithBinlog(ctx context.Context) (*Services, string, error) {
	if s.Info.Binlog {
		return s, "", nil
	}
	ownMySQL.mu.Lock()
	defer ownMySQL.mu.Unlock()
	started := ""
	if ownMySQL.node == nil {
		n, err := dbnode.Start(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("this lesson reads a binary log, which %s does not write (%s), and the lab could not start a server of its own: %w",
				s.Info.MySQLVersion, s.Info.BinlogNote, err)
		}
		ownMySQL.node = n
		started = fmt.Sprintf(" (started in %.1fs)", n.Took.Seconds())
	}
	twin, ok := ownMySQL.svcs[s]
	if !ok {
		var err error
		if twin, err = s.ownTwin(ctx); err != nil {
			return nil, "", fmt.Errorf("the lab's own MySQL server at %s: %w", ownMySQL.node.Addr(), err)
		}
		// One server for every namespace of a workshop: each twin's pool
		// stays small, so forty of them, and their workers' pools, fit its
		// max_connections (1000).
		twin.MySQL.SetMaxOpenConns(8)
		if ownMySQL.svcs == nil {
			ownMySQL.svcs = map[*Services]*Services{}
		}
		ownMySQL.svcs[s] = twin
	}
	n := ownMySQL.node
	return twin, sayOwnBinlog.F(
		s.Config.MySQLAddr(), s.Info.BinlogState, n.Flavor, strings.SplitN(n.Version, "-", 2)[0], n.Addr(), started), nil
}

// ownTwin is s on the own server: as its administrator, or, for a
// workshop participant's s (Watch set), as a participant's login of the
// same name made there, granted their databases only, the log read by the
// administrator for their relay.
func (s *Services) ownTwin(ctx context.Context) (*Services, error) {
	dsn := ownMySQL.node.DSN()
	if s.Watch == nil {
		twin, err := s.WithMySQL(ctx, dsn)
		if err == nil {
			twin.Config.Binlog = "" // the own server's administrator reads its log
		}
		return twin, err
	}
	if ownMySQL.root == nil {
		root, err := Open(ctx, dsn, "")
		if err != nil {
			return nil, err
		}
		root.SetMaxOpenConns(4)
		ownMySQL.root = root
	}
	pdsn, err := MakeParticipantUser(ctx, ownMySQL.root, dsn, s.Names.NS, 24)
	if err != nil {
		return nil, err
	}
	twin, err := s.WithMySQL(ctx, pdsn)
	if err != nil {
		return nil, err
	}
	twin.Watch = &Watch{DB: ownMySQL.root, User: ParticipantUser(s.Names.NS)}
	twin.Config.Binlog = dsn
	return twin, nil
}

// StopOwnMySQL stops the lab's own MySQL server, if one was started, and
// removes its data.
func StopOwnMySQL() {
	ownMySQL.mu.Lock()
	defer ownMySQL.mu.Unlock()
	for _, s := range ownMySQL.svcs {
		if s.MySQL != nil {
			s.MySQL.Close()
		}
	}
	ownMySQL.svcs = nil
	if ownMySQL.root != nil {
		ownMySQL.root.Close()
		ownMySQL.root = nil
	}
	if ownMySQL.node != nil {
		ownMySQL.node.Stop()
		ownMySQL.node = nil
	}
}
