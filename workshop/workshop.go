// Package workshop serves the lab's screen over SSH (`lab serve`): every
// participant connects with nothing but an SSH client and gets the screen,
// in a namespace named after their SSH user, on the workshop's shared
// servers. Nothing else is served: no shell, no command, no forwarding.
package workshop

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	bm "charm.land/wish/v2/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rmlab/lab/broker"
	"github.com/rmlab/lab/progress"
	"github.com/rmlab/lab/room"
	"github.com/rmlab/lab/services"
	"github.com/rmlab/lab/steps"
	"github.com/rmlab/lab/ui"
)

// Config is a workshop server's settings.
type Config struct {
	HostKey         string          // the host key file, created once and kept
	Seats           int             // participants at once; the next one is refused
	Password        string          // the workshop password ("" for keys only)
	ParticipantKeys []ssh.PublicKey // keys that may join as any participant
	InstructorKeys  []ssh.PublicKey // keys that open the room: ssh instructor@HOST
	IdleTimeout     time.Duration   // a session with no input this long ends
	MaxWorkers      int             // worker processes one participant may have alive (0: no cap)
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
	// Room keeps every participant's progress and activity in MySQL,
	// shared by every `lab serve` of the room; nil keeps it in files here.
	Room *room.Room
}

// Server is a running workshop server.
type Server struct {
	cfg Config
	ssh *ssh.Server

	mu       sync.Mutex
	sessions map[string]time.Time    // participant → when the session began
	programs map[string]*tea.Program // participant → their screen, for the room's commands
	conns    map[string]ssh.Session  // participant → their session, for end
	stop     context.CancelFunc      // ends the room's poller
	screens  sync.WaitGroup          // screens still closing (workers, sessions, the last save)
}

// New builds the server; Serve runs it.
func New(cfg Config) (*Server, error) {
	if cfg.Password == "" && len(cfg.ParticipantKeys) == 0 {
		return nil, errors.New("no way for participants to log in: set the workshop password's environment variable or give --participant-keys FILE")
	}
	if cfg.Seats < 1 {
		cfg.Seats = 1
	}
	if !cfg.OwnBroker && cfg.Services != nil {
		cfg.Services.Info.OwnBroker = false
		cfg.Services.Info.OwnBrokerNote = "lab serve starts no broker nodes for participants unless given --own-broker"
	}
	if err := os.MkdirAll(filepath.Dir(cfg.HostKey), 0o700); err != nil {
		return nil, fmt.Errorf("host key folder %s: %w", filepath.Dir(cfg.HostKey), err)
	}
	s := &Server{cfg: cfg, sessions: map[string]time.Time{}, programs: map[string]*tea.Program{}, conns: map[string]ssh.Session{}}
	opts := []ssh.Option{
		wish.WithHostKeyPath(cfg.HostKey), // written on first start, read after: no changed-key warning on day two
		wish.WithMiddleware(bm.MiddlewareWithProgramHandler(s.program), s.admit),
	}
	if cfg.Password != "" {
		// The password lets "instructor" in too, only for admit to say that
		// the room needs an instructor's key: a refusal with a reason.
		opts = append(opts, wish.WithPasswordAuth(func(_ ssh.Context, pass string) bool {
			return subtle.ConstantTimeCompare([]byte(pass), []byte(cfg.Password)) == 1
		}))
	}
	if len(cfg.ParticipantKeys)+len(cfg.InstructorKeys) > 0 {
		opts = append(opts, wish.WithPublicKeyAuth(func(ctx ssh.Context, key ssh.PublicKey) bool {
			if ctx.User() == Instructor && has(cfg.InstructorKeys, key) {
				ctx.SetValue(instructorKey{}, true)
				return true
			}
			return has(cfg.ParticipantKeys, key)
		}))
	}
	if cfg.IdleTimeout > 0 {
		opts = append(opts, wish.WithIdleTimeout(cfg.IdleTimeout))
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
	go s.poll(ctx, r)
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
	type target struct {
		p    *tea.Program
		conn ssh.Session
	}
	var to []target
	s.mu.Lock()
	for name, p := range s.programs {
		if cmd.Target == "" || cmd.Target == name {
			to = append(to, target{p, s.conns[name]})
		}
	}
	s.mu.Unlock()
	for _, t := range to { // outside the lock: Send waits for the screen's loop
		switch cmd.Kind {
		case room.Goto:
			t.p.Send(ui.GotoLesson{Lesson: cmd.Arg})
		case room.Say:
			t.p.Send(ui.Broadcast{Text: cmd.Arg})
		case room.End:
			if t.conn != nil {
				t.conn.Close() // the screen ends with the connection; its workers die with it
			}
		}
	}
}

// Serve accepts participants on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.ssh.Serve(ln)
	if errors.Is(err, ssh.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting, ends every session and waits (within ctx)
// until each screen has killed its workers and saved its progress.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.stop != nil {
		s.stop()
	}
	conns := make([]ssh.Session, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	err := s.ssh.Shutdown(ctx)
	for _, c := range conns {
		c.Close() // a screen still open ends now
	}
	// Wait until every screen has closed its run and saved its progress.
	done := make(chan struct{})
	go func() { s.screens.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return err
}

// Participants lists who is connected now, sorted.
func (s *Server) Participants() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p := range s.sessions {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Instructor is the SSH user name that opens the room (with a key from
// --instructor-keys, nothing else).
const Instructor = "instructor"

type instructorKey struct{}

func has(keys []ssh.PublicKey, key ssh.PublicKey) bool {
	for _, k := range keys {
		if ssh.KeysEqual(k, key) {
			return true
		}
	}
	return false
}

// admit decides whether a session may have a screen: a valid participant
// name, no command (the screen is all there is), a seat free, and no other
// session of the same participant (two screens on one namespace would run
// each other's steps). The screen middleware runs inside it.
func (s *Server) admit(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		user := sess.User()
		if user == Instructor {
			if ok, _ := sess.Context().Value(instructorKey{}).(bool); !ok {
				wish.Fatalln(sess, "lab: the room opens only with an instructor's key (lab serve --instructor-keys FILE); a password or a participant's key never opens it")
				return
			}
			if _, _, ok := sess.Pty(); !ok || len(sess.Command()) > 0 {
				wish.Fatalln(sess, "lab: the room is a screen: connect with ssh -t and no command")
				return
			}
			next(sess)
			return
		}
		if p := services.NamespaceProblem(user); p != "" {
			wish.Fatalln(sess, fmt.Sprintf("lab: %q cannot be a participant's name: %s; connect as, e.g., ssh alice@HOST", user, p))
			return
		}
		if len(sess.Command()) > 0 {
			wish.Fatalln(sess, "lab: this server serves the lab's screen only; connect without a command")
			return
		}
		if _, _, ok := sess.Pty(); !ok {
			wish.Fatalln(sess, "lab: the screen needs a terminal; connect with ssh -t")
			return
		}
		s.mu.Lock()
		_, twice := s.sessions[user]
		full := len(s.sessions) >= s.cfg.Seats
		if !twice && !full {
			s.sessions[user] = time.Now()
		}
		s.mu.Unlock()
		switch {
		case twice:
			wish.Fatalln(sess, fmt.Sprintf("lab: %s already has a screen open on this server; close it first (one screen per participant: two would run each other's steps)", user))
			return
		case full:
			wish.Fatalln(sess, fmt.Sprintf("lab: the workshop is full (%d seats); ask the instructor for a seat", s.cfg.Seats))
			return
		}
		defer func() {
			s.mu.Lock()
			delete(s.sessions, user)
			delete(s.programs, user)
			delete(s.conns, user)
			s.mu.Unlock()
		}()
		next(sess)
	}
}

// program is one participant's screen as a program, kept so the room's
// commands reach it.
func (s *Server) program(sess ssh.Session) *tea.Program {
	if sess.User() == Instructor {
		s.mu.Lock()
		rm := s.cfg.Room
		s.mu.Unlock()
		if rm == nil {
			wish.Fatalln(sess, "lab: this server keeps no room; start it with lab serve --room NAME to watch the room")
			return nil
		}
		return tea.NewProgram(ui.NewRoom(sess.Context(), rm), bm.MakeOptions(sess)...)
	}
	m, opts := s.screen(sess)
	if m == nil {
		return nil
	}
	p := tea.NewProgram(m, append(opts, bm.MakeOptions(sess)...)...)
	s.mu.Lock()
	s.programs[sess.User()], s.conns[sess.User()] = p, sess
	s.mu.Unlock()
	return p
}

// screen is one participant's lab screen, in their namespace; it closes
// (workers killed, sessions rolled back) when the SSH session ends.
func (s *Server) screen(sess ssh.Session) (tea.Model, []tea.ProgramOption) {
	svc := s.cfg.Services.For(sess.User())
	env := &steps.Env{Svc: svc, Binary: s.cfg.Binary, Queues: broker.NewReader(svc).Read, MaxWorkers: s.cfg.MaxWorkers}
	s.mu.Lock()
	rm := s.cfg.Room
	s.mu.Unlock()
	var store progress.Store
	if rm != nil {
		store = rm.Store(sess.User())
	} else {
		file, err := progress.Participant(sess.User(), s.cfg.LessonsDir)
		if err != nil {
			wish.Fatalln(sess, "lab: where to keep your progress: "+err.Error())
			return nil, nil
		}
		store = progress.FileStore{Path: file}
	}
	m, stop, err := ui.New(sess.Context(), ui.Options{Env: env, Lang: s.cfg.Lang, LessonsDir: s.cfg.LessonsDir, Progress: store, Start: s.cfg.Start})
	if err != nil {
		wish.Fatalln(sess, "lab: "+err.Error())
		return nil, nil
	}
	s.screens.Add(1)
	go func() {
		defer s.screens.Done()
		<-sess.Context().Done()
		stop()
	}()
	return m, nil
}

// ParseKeys reads an authorized_keys file.
func ParseKeys(path string) ([]ssh.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read keys from %s: %w", path, err)
	}
	var out []ssh.PublicKey
	for len(strings.TrimSpace(string(b))) > 0 {
		k, _, _, rest, err := gossh.ParseAuthorizedKey(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (one key per line, as in authorized_keys)", path, err)
		}
		out = append(out, k)
		b = rest
	}
	return out, nil
}
