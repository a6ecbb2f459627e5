// Package workshop serves the lab's screen over SSH (`lab serve`): every
// participant connects with nothing but an SSH client and gets the screen,
// in a namespace named after their SSH user, on the workshop's shared
// servers. Nothing else is served: no shell, no command, no forwarding.
//
// Anything that arrives over SSH is hostile: auth.go decides who may log
// in (and reads who the session is from the key that authenticated),
// admission.go who gets a screen and what a connection may cost before
// it has one, seat.go a participant's seat: the screen, its bounded size
// and its end.
package workshop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/ssh"
	"charm.land/wish/v2"
	bm "charm.land/wish/v2/bubbletea"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/ui"
)

// Config is a workshop server's settings.
type Config struct {
	HostKey         string          // the host key file, created once and kept
	Seats           int             // participants at once; the next one is refused
	Password        string          // the workshop password ("" for keys only)
	ParticipantKeys []ssh.PublicKey // keys that may join as any participant
	InstructorKeys  []ssh.PublicKey // keys that open the room: ssh instructor@HOST
	// IdleTimeout ends a session with no key pressed this long (keepalives
	// and the screen's own redraws do not count).
	IdleTimeout time.Duration
	// LoginTimeout closes a connection that has not authenticated and
	// opened its screen this long after it connected (default 30 s).
	LoginTimeout time.Duration
	// ClaimWait is how long a login waits for the participant's screen
	// elsewhere in the room to close before it is refused (0: 5 s).
	ClaimWait time.Duration
	// PendingPerAddress caps the connections one address may hold open
	// before they have a screen (default 64: a class of forty behind one NAT logs
	// in at once; a flood of silent connections does not pile up).
	PendingPerAddress int
	MaxWorkers        int // worker processes one participant may have alive (0: no cap)
	// ChallengeRuns is how many participants' challenge runs the server
	// grades at once (0: 2); each is a MySQL server of its own, the lab's
	// pipeline and the faults, for about 15 s.
	ChallengeRuns int
	// OwnBroker lets participants' lessons start RabbitMQ nodes of their
	// own (lab serve --own-broker): about 150 MB and seconds of a core per
	// node, three per participant in the cluster lesson. Without it New
	// turns the capability off in Services.Info, which every participant's
	// lesson run reads.
	OwnBroker  bool
	Services   *services.Services
	Binary     string // the lab binary, for worker processes
	Lang       string
	LessonsDir string
	Start      string // the lesson a new participant's screen opens at ("": the first)
	// ProgressDir keeps the participants' progress files when there is no
	// room ("": progress.Participant's folder, under $XDG_STATE_HOME).
	ProgressDir string
	// Room keeps every participant's progress and activity in MySQL,
	// shared by every `lab serve` of the room; nil keeps it in files here.
	Room *room.Room
	// Log gets one line per login, refusal (with its reason), session end
	// and room command; the room's log gets the same lines.
	Log io.Writer
	// PresenterNamespace is where the instructor's present N runs its
	// lesson (default: the room's own, room.PresenterNamespace, or
	// "presenter" without a room: names no participant can take).
	PresenterNamespace string
}

// Server is a running workshop server.
type Server struct {
	cfg   Config
	ssh   *ssh.Server
	auth  *auth
	guard *guard

	mu          sync.Mutex
	seats       map[string]*seat  // participant → their session
	instructors map[*seat]bool    // the instructor's sessions
	shutting    bool              // Shutdown began: no new session
	live        map[string]string // participant → the holder of a screen claimed in the room and not yet closed

	beforeRelease func()             // tests: a run that is slow to close
	beforeClose   func()             // tests: Shutdown's last moment with the connections open
	stop          context.CancelFunc // ends the room's poller
	screens       sync.WaitGroup     // screens still closing (workers, sessions, the last save)
	releases      sync.WaitGroup     // room claims still to release once their screen closed
	ln            net.Listener       // what Serve accepts on, closed by Shutdown
	open          atomic.Int32       // how many of them, for Shutdown's error

	lessonsOnce sync.Once
	lessons     []*lab.Lesson

	// The instructor's presentation: while on, every participant's screen
	// shows the presented frame instead of their own, read-only.
	presenting atomic.Bool
	presented  atomic.Pointer[room.Frame]
	presentGen atomic.Int64
	ownNodes   bool // the machine can start RabbitMQ nodes (the presenter's lessons may)
	logins     *Logins
	grading    grading // participants' challenge runs graded here
	budgets    budgets // what each connection has spent

	refused refusalLog // each name's refusals, bounded in the log
}

// New builds the server; Serve runs it.
func New(cfg Config) (*Server, error) {
	if cfg.Password == "" && len(cfg.ParticipantKeys) == 0 {
		return nil, errors.New("no way for participants to log in: set the workshop password's environment variable or give --participant-keys FILE")
	}
	if cfg.Seats < 1 {
		cfg.Seats = 1
	}
	if cfg.LoginTimeout <= 0 {
		cfg.LoginTimeout = 30 * time.Second
	}
	if cfg.PendingPerAddress <= 0 {
		cfg.PendingPerAddress = 64
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	ownNodes := cfg.Services != nil && cfg.Services.Info.OwnBroker
	if !cfg.OwnBroker && cfg.Services != nil {
		cfg.Services.Info.OwnBroker = false
		cfg.Services.Info.OwnBrokerNote = "lab serve starts no broker nodes for participants unless given --own-broker"
	}
	if err := os.MkdirAll(filepath.Dir(cfg.HostKey), 0o700); err != nil {
		return nil, fmt.Errorf("host key folder %s: %w", filepath.Dir(cfg.HostKey), err)
	}
	s := &Server{cfg: cfg, seats: map[string]*seat{}, instructors: map[*seat]bool{}, live: map[string]string{}, ownNodes: ownNodes}
	s.grading.max = cfg.ChallengeRuns
	if s.grading.max <= 0 {
		s.grading.max = 2
	}
	s.logins = ProbeLogins(context.Background(), cfg.Services)
	for _, l := range s.logins.Describe() {
		s.logf("%s", l)
	}
	s.auth = newAuth(&s.cfg, s.logf)
	s.guard = newGuard(cfg.PendingPerAddress, cfg.LoginTimeout, s.logf)
	opts := []ssh.Option{
		wish.WithHostKeyPath(cfg.HostKey), // written on first start, read after: no changed-key warning on day two
		wish.WithMiddleware(bm.MiddlewareWithProgramHandler(s.program), s.admit),
		func(srv *ssh.Server) error {
			srv.HandshakeTimeout = cfg.LoginTimeout
			srv.ConnCallback = s.guard.wrap
			// Sessions, their requests bounded before the library keeps
			// them, and direct-tcpip only to what a participant's own
			// challenge run asked to be forwarded, while it runs
			// (forwardCallback); no other channel.
			srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": s.boundedSession, "direct-tcpip": ssh.DirectTCPIPHandler}
			srv.LocalPortForwardingCallback = s.forwardCallback
			return nil
		},
	}
	if cfg.Password != "" {
		// The password lets "instructor" in too, only for admit to say that
		// the room needs an instructor's key: a refusal with a reason.
		opts = append(opts, wish.WithPasswordAuth(s.auth.password))
	}
	if len(cfg.ParticipantKeys)+len(cfg.InstructorKeys) > 0 {
		opts = append(opts, wish.WithPublicKeyAuth(s.auth.publicKey))
	}
	srv, err := wish.NewServer(opts...)
	if err != nil {
		return nil, fmt.Errorf("SSH server: %w", err)
	}
	s.ssh = srv
	if cfg.Room != nil {
		s.SetRoom(cfg.Room)
	}
	return s, nil
}

// logf writes one line of the server's log, and the room's.
func (s *Server) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	fmt.Fprintf(s.cfg.Log, "%s lab serve: %s\n", time.Now().UTC().Format(time.DateTime), line)
	s.mu.Lock()
	rm := s.cfg.Room
	s.mu.Unlock()
	if rm != nil {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		rm.Audit(c, line) // the stderr line stands when the room cannot take it
	}
}

// SetRoom keeps progress in the room from the next session on (lab serve
// opens the room once it knows its own address).
func (s *Server) SetRoom(r *room.Room) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Room = r
	if s.stop != nil {
		s.stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	go s.keepLessons(ctx, r)
	go s.poll(ctx, r)
}

// keepLessons records in the room the lessons this server serves (its
// --lessons folder's, or the built-in ones), so lab room --goto takes them
// from an instructor whose own lab has other lessons.
func (s *Server) keepLessons(ctx context.Context, r *room.Room) {
	ls := s.lessonList()
	if len(ls) == 0 {
		s.logf("the room cannot be told this server's lessons: none loaded")
		return
	}
	ids := map[string]int{}
	for _, l := range ls {
		ids[l.ID] = l.Number
	}
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.KeepLessons(c, ids); err != nil {
		s.logf("%v", err)
	}
	// How this server makes participants' broker logins: lab room --reset
	// and --drop remove them the same way (with their own rabbitmqctl: a
	// command is never read out of a table).
	if s.cfg.Services.Config.BrokerControl == "rabbitmqctl" {
		if err := r.SetMeta(c, "broker_control", "rabbitmqctl"); err != nil {
			s.logf("%v", err)
		}
	}
}

// presenterNS is where this server's presented lesson runs.
func (s *Server) presenterNS() string {
	if s.cfg.PresenterNamespace != "" {
		return s.cfg.PresenterNamespace
	}
	if rm := s.room(); rm != nil {
		return room.PresenterNamespace(rm.Name)
	}
	return room.Presenter
}

func (s *Server) room() *room.Room {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Room
}

// poll carries out the room's commands on this server's participants:
// each server of the room reads the same table, each acts on its own.
func (s *Server) poll(ctx context.Context, r *room.Room) {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	last, _ := r.LastCommand(c) // only what is sent from now on
	cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		cmds, err := r.Commands(c, last)
		cancel()
		if err != nil {
			continue // the next tick asks again
		}
		for _, cmd := range cmds {
			last = cmd.ID
			s.carryOut(cmd)
		}
	}
}

func (s *Server) carryOut(cmd room.Command) {
	if cmd.Kind == room.Present {
		s.present(cmd.Arg != "off", cmd.Created)
		return
	}
	var to []*seat
	s.mu.Lock()
	for name, st := range s.seats {
		if cmd.Target == "" || cmd.Target == name {
			to = append(to, st)
		}
	}
	s.mu.Unlock()
	for _, st := range to { // outside the lock: Send waits for the screen's loop
		p := st.program()
		switch cmd.Kind {
		case room.Goto:
			if p != nil {
				p.Send(ui.GotoLesson{Lesson: cmd.Arg})
			}
		case room.Say:
			if p != nil {
				p.Send(ui.Broadcast{Text: room.Plain(cmd.Arg, 255)})
			}
		case room.End:
			st.end("the instructor ended your session")
		case room.Timer:
			if p != nil {
				p.Send(ui.Timer{Until: cmd.Until()})
			}
		case room.Present:
			// handled once per server, below
		case room.Watch:
			if rm := s.room(); rm != nil && cmd.Target != "" {
				s.watch(st, rm, cmd.Target, cmd.Until())
			}
		}
	}
}

// Serve accepts participants on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	shutting := s.shutting
	if !shutting {
		s.ln = ln
	}
	s.mu.Unlock()
	if shutting { // Shutdown came first (a SIGTERM during start-up)
		ln.Close()
		return nil
	}
	err := s.ssh.Serve(ln)
	s.mu.Lock()
	shutting = s.shutting
	s.mu.Unlock()
	if errors.Is(err, ssh.ErrServerClosed) || shutting {
		return nil
	}
	return err
}

// Shutdown stops accepting, ends every session (each screen restores its
// terminal and says why) and waits (within ctx) until each screen has
// killed its workers and saved its progress; then it closes every
// connection, as a client may keep its own open after its session ended.
// Its error says what was still closing when ctx ended.
func (s *Server) Shutdown(ctx context.Context) error {
	// Listeners close now: Shutdown with a context already done returns at
	// once, leaving the connections to the sessions' ends below.
	now, cancel := context.WithCancel(context.Background())
	cancel()
	s.ssh.Shutdown(now)
	s.mu.Lock()
	s.shutting = true // a connection already in opens no session now
	if s.ln != nil {
		s.ln.Close() // Serve may not have handed it to the SSH server yet
	}
	if s.stop != nil {
		s.stop()
	}
	seats := make([]*seat, 0, len(s.seats)+len(s.instructors))
	for _, st := range s.seats {
		seats = append(seats, st)
	}
	for st := range s.instructors {
		seats = append(seats, st)
	}
	s.mu.Unlock()
	for _, st := range seats {
		st.end("the workshop server is shutting down")
	}
	// Wait until every session has been told why (the instructor's
	// included) and every screen has closed its run and saved its
	// progress.
	done := make(chan struct{})
	go func() {
		for _, st := range seats {
			<-st.told
		}
		s.screens.Wait()
		s.releases.Wait() // the room's claims: another server may take them at once
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		untold := 0
		for _, st := range seats {
			select {
			case <-st.told:
			default:
				untold++
			}
		}
		err = fmt.Errorf("shutting down: when the wait ended, %d session(s) were still ending and %d screen(s) still closing (workers to kill, progress to save): %w", untold, s.open.Load(), ctx.Err())
	}
	s.mu.Lock()
	last := s.beforeClose
	s.mu.Unlock()
	if last != nil {
		last()
	}
	s.ssh.Close()
	return err
}

// Participants lists who is connected now, sorted.
func (s *Server) Participants() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p := range s.seats {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
