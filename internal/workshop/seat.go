package workshop

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	bm "charm.land/wish/v2/bubbletea"
	"github.com/charmbracelet/x/ansi"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
	"github.com/rmlab/lab/ui"
)

// MaxWidth and MaxHeight bound the screen whatever size a client asks for:
// the screen's cost grows with its cells (a 3000×1500 pty took a session
// from 35 MB to 678 MB, 10000×5000 ended the server out of memory), and no
// terminal a person reads is larger.
const (
	MaxWidth  = 500
	MaxHeight = 200
)

// seat is one session with a screen: a participant's, or the instructor's.
type seat struct {
	sess    ssh.Session
	idle    time.Duration
	lastKey atomic.Int64 // unix nanoseconds of the last key pressed
	why     atomic.Pointer[string]

	// The last frame drawn and until when the instructor watches it.
	frame      atomic.Pointer[tea.View]
	watchUntil atomic.Int64 // unix nanoseconds
	publishing atomic.Bool

	mu     sync.Mutex
	prog   *tea.Program
	ended  chan struct{} // closed once the session's handler returned
	told   chan struct{} // closed once the session has been told why it ended, or left without a screen
	leave  sync.Once
	closed chan struct{} // closed once the screen's run has closed
}

func (s *Server) newSeat(sess ssh.Session) *seat {
	st := &seat{sess: sess, idle: s.cfg.IdleTimeout, ended: make(chan struct{}), told: make(chan struct{}), closed: make(chan struct{})}
	st.lastKey.Store(time.Now().UnixNano())
	return st
}

// seatOf finds the seat of a session the middleware passes on (a bounded
// wrapper of it).
func (s *Server) seatOf(sess ssh.Session) *seat {
	if b, ok := sess.(*bounded); ok {
		return b.seat
	}
	return nil
}

// run hands the session, its pty bounded, to the screen middleware, and
// ends it after idle with no key pressed.
func (st *seat) run(next ssh.Handler) {
	b := bound(st)
	if st.idle > 0 {
		go st.watchIdle()
	}
	next(b)
	close(st.ended)
	defer st.left()
	if why := st.why.Load(); why != nil {
		// The screen has restored the terminal (alternate screen left,
		// cursor shown) as its program ended; say why in one line.
		wish.Println(st.sess, "\r\nlab: "+*why)
	}
}

// end asks the screen to end, saying why once the terminal is restored; a
// screen that does not end within 5 s has its session closed. A session
// whose screen has not started gets none: it ends saying why.
func (st *seat) end(why string) {
	if !st.why.CompareAndSwap(nil, &why) {
		return
	}
	p := st.program()
	if p == nil {
		// No screen yet (the room's claim or the logins may take seconds):
		// program sees why under the same lock and starts none.
		return
	}
	go p.Quit() // a screen busy in Update must not hold the caller
	go func() {
		select {
		case <-st.ended:
		case <-time.After(5 * time.Second):
			st.sess.Close()
		}
	}()
}

// left marks the session as done with: told why it ended, or refused
// before its screen ran. Shutdown waits for it before it closes the
// connections.
func (st *seat) left() { st.leave.Do(func() { close(st.told) }) }

func (st *seat) because() string {
	if why := st.why.Load(); why != nil {
		return ": " + *why
	}
	return ""
}

func (st *seat) program() *tea.Program {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.prog
}

func (st *seat) waitClosed(d time.Duration) {
	st.mu.Lock()
	started := st.prog != nil
	st.mu.Unlock()
	if !started {
		return
	}
	select {
	case <-st.closed:
	case <-time.After(d):
	}
}

// watchIdle ends the session once no key has been pressed for idle. Only
// key presses count: an SSH keepalive, or the screen's own ticking
// redraws, would keep a session forever.
func (st *seat) watchIdle() {
	every := min(max(st.idle/10, 100*time.Millisecond), 5*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-st.ended:
			return
		case <-t.C:
		}
		if since := time.Since(time.Unix(0, st.lastKey.Load())); since >= st.idle {
			st.end("no key pressed for " + st.idle.String() + ": the session ended (ssh again to resume where you were)")
			return
		}
	}
}

// program is one session's screen as a program, kept on its seat so the
// room's commands and the server's end reach it.
func (s *Server) program(sess ssh.Session) *tea.Program {
	st := s.seatOf(sess)
	if st == nil {
		wish.Fatalln(sess, "lab: no seat for this session")
		return nil
	}
	if st.why.Load() != nil {
		return nil // ended before its screen: the session says why
	}
	var m tea.Model
	if sess.User() == Instructor {
		rm := s.room()
		if rm == nil {
			wish.Fatalln(sess, "lab: this server keeps no room; start it with lab serve --room NAME to watch the room")
			return nil
		}
		rv := ui.NewRoom(sess.Context(), rm, s.lessonList())
		rv.Present = s.presenterScreen
		rv.Lang = s.cfg.Lang
		rv.Log = func(line string) { s.logf("%s", line) }
		rv.Reset = func(ctx context.Context, name string) error {
			if p := services.NamespaceProblem(name); p != "" {
				return fmt.Errorf("%q is not a participant's name: %s", name, p)
			}
			var out strings.Builder
			cl := cleaner.New(ctx, s.cfg.Services, labs.BrokerNames(s.cfg.LessonsDir), &out)
			defer cl.Close()
			if err := rm.Reset(ctx, name, func(ctx context.Context, ns string) { cl.Namespace(ctx, services.Names{NS: ns}) }); err != nil {
				return err
			}
			if cl.Failed() {
				return fmt.Errorf("%s's namespace was not cleaned completely: %s", name, strings.TrimSpace(out.String()))
			}
			return nil
		}
		m = rv
		close(st.closed)
	} else if m = s.screen(sess, st); m == nil {
		return nil
	}
	m = mirror{Model: m, seat: st, srv: s}
	opts := append(bm.MakeOptions(sess), tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
		switch msg := msg.(type) {
		case tea.KeyPressMsg:
			st.lastKey.Store(time.Now().UnixNano())
			// A presentation is read-only; ctrl+c still leaves.
			if s.presenting.Load() && sess.User() != Instructor && msg.String() != "ctrl+c" {
				return nil
			}
		case tea.SuspendMsg: // as MakeOptions' own filter, which this one replaces
			return tea.ResumeMsg{}
		}
		return msg
	}))
	// The process's signals are the server's (Shutdown ends each session
	// saying why): a screen's own handler quit it at once, and kept SIGTERM
	// from ending a process that hosts sessions.
	opts = append(opts, tea.WithoutSignalHandler())
	p := tea.NewProgram(m, opts...)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.why.Load() != nil {
		return nil // ended while the screen was made (end saw no program)
	}
	st.prog = p
	return p
}

// lessonList is the lessons the server serves, for the room's lesson
// numbers and the article's answers (what did not load is left out: the
// participants' screens say which files).
func (s *Server) lessonList() []*lab.Lesson {
	s.lessonsOnce.Do(func() {
		if s.cfg.LessonsDir != "" {
			s.lessons, _ = labs.LoadDir(s.cfg.LessonsDir, s.cfg.Lang)
		} else {
			s.lessons, _ = labs.Builtin(s.cfg.Lang)
		}
	})
	return s.lessons
}

// screen is one participant's lab screen, in their namespace; it closes
// (workers killed, sessions rolled back) when the SSH session ends.
func (s *Server) screen(sess ssh.Session, st *seat) tea.Model {
	var store progress.Store
	if rm := s.room(); rm != nil {
		store = rm.Store(sess.User())
	} else {
		file, err := s.progressFile(sess.User())
		if err != nil {
			wish.Fatalln(sess, "lab: where to keep your progress: "+err.Error())
			return nil
		}
		store = progress.FileStore{Path: file}
	}
	svc, closeLogins, err := s.participantServices(sess.Context(), sess.User())
	if err != nil {
		s.logf("%s's logins could not be made: %v", sess.User(), err)
		wish.Fatalln(sess, "lab: "+err.Error()+" (tell the instructor: the server's log has it too)")
		return nil
	}
	env := &steps.Env{Svc: svc, Binary: s.cfg.Binary, Queues: broker.NewReader(svc).Read, MaxWorkers: s.cfg.MaxWorkers}
	m, stop, err := ui.New(sess.Context(), ui.Options{Env: env, Lang: s.cfg.Lang, LessonsDir: s.cfg.LessonsDir, Progress: store, Start: s.cfg.Start})
	if err != nil {
		closeLogins()
		wish.Fatalln(sess, "lab: "+err.Error())
		return nil
	}
	s.screens.Add(1)
	s.open.Add(1)
	go func() {
		defer s.screens.Done()
		defer s.open.Add(-1)
		defer close(st.closed)
		// The screen's run closes with its session: when the handler
		// returns (q, end, idle), or the connection drops.
		select {
		case <-sess.Context().Done():
		case <-st.ended:
		}
		stop()
		closeLogins()
	}()
	return m
}

// mirror keeps the last frame a screen drew, for the instructor's watch,
// and shows the instructor's presentation instead while there is one.
type mirror struct {
	tea.Model
	seat *seat
	srv  *Server
}

// presentedMsg redraws a screen: the presentation changed, began or ended.
type presentedMsg struct{}

func (m mirror) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(presentedMsg); ok {
		return m, nil
	}
	next, cmd := m.Model.Update(msg)
	return mirror{Model: next, seat: m.seat, srv: m.srv}, cmd
}

func (m mirror) View() tea.View {
	v := m.Model.View()
	m.seat.frame.Store(&v)
	if f := m.srv.presented.Load(); m.srv.presenting.Load() && f != nil && m.seat.sess.User() != Instructor {
		w, h := 80, 24
		if p, _, ok := m.seat.sess.Pty(); ok {
			w, h = clamp(p.Window).Width, clamp(p.Window).Height
		}
		v.Content = presentedView(f.Content, w, h)
	}
	return v
}

// presentedView is the presented frame on a participant's screen: a line
// saying so, then the frame cut to their size.
func presentedView(frame string, w, h int) string {
	var b strings.Builder
	b.WriteString(ansi.Truncate("\x1b[1m the instructor is presenting (read-only; your lesson waits where you left it)\x1b[m", w, "…"))
	for i, l := range strings.Split(frame, "\n") {
		if i >= h-1 {
			break
		}
		b.WriteString("\n" + ansi.Truncate(l, w, "…") + "\x1b[m")
	}
	return b.String()
}

// present turns the presentation on or off on this server: while on, it
// reads the presented frame twice a second and redraws every screen when
// it changed.
func (s *Server) present(on bool, since time.Time) {
	gen := s.presentGen.Add(1)
	s.presenting.Store(on)
	rm := s.room()
	if !on {
		s.presented.Store(nil)
		s.redrawAll()
		if rm != nil {
			// The ended presentation's frame goes: the next shows only
			// what its own presenter publishes.
			c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			rm.DropFrame(c, room.Presenter)
			cancel()
		}
		return
	}
	if rm == nil {
		return
	}
	go func() {
		var last string
		for s.presentGen.Load() == gen {
			c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			f, ok, err := rm.Frame(c, room.Presenter)
			cancel()
			// A frame older than the command is an earlier presentation's
			// (the presenter's first frame and the command leave together:
			// a second of slack).
			if err == nil && ok && !f.At.Before(since.Add(-time.Second)) && f.Content != last {
				last = f.Content
				s.presented.Store(&f)
				s.redrawAll()
			}
			time.Sleep(400 * time.Millisecond)
		}
	}()
}

func (s *Server) redrawAll() {
	s.mu.Lock()
	var ps []*tea.Program
	for _, st := range s.seats {
		if p := st.program(); p != nil {
			ps = append(ps, p)
		}
	}
	s.mu.Unlock()
	for _, p := range ps {
		go p.Send(presentedMsg{}) // never block the poller on a slow screen
	}
}

// presenterScreen runs lesson id for the instructor's present N, in the
// presenter namespace, with RabbitMQ nodes of its own where the machine
// can start them (lessons 14 and 19 need them; the participants only
// watch, so it is one set of nodes for the room).
func (s *Server) presenterScreen(ctx context.Context, id string) (tea.Model, func(), error) {
	ns := s.presenterNS()
	svc := s.cfg.Services.For(ns)
	if s.ownNodes {
		svc.Info.OwnBroker, svc.Info.OwnBrokerNote = true, "the presenter's own nodes"
	}
	env := &steps.Env{Svc: svc, Binary: s.cfg.Binary, Queues: broker.NewReader(svc).Read, MaxWorkers: s.cfg.MaxWorkers, Nodes: &steps.NodeShelf{}}
	file, err := s.progressFile(ns)
	if err != nil {
		return nil, nil, err
	}
	m, stop, err := ui.New(ctx, ui.Options{Env: env, Lang: s.cfg.Lang, LessonsDir: s.cfg.LessonsDir, Progress: progress.FileStore{Path: file}, Start: id})
	if err != nil {
		return nil, nil, err
	}
	return m, func() { stop(); env.Nodes.Close() }, nil
}

// watch publishes the seat's screen to the room until the watch expires,
// twice a second, only when it changed.
func (s *Server) watch(st *seat, rm *room.Room, name string, until time.Time) {
	st.watchUntil.Store(until.UnixNano())
	if !st.publishing.CompareAndSwap(false, true) {
		return // already publishing: the new end is taken from watchUntil
	}
	go func() {
		defer st.publishing.Store(false)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		var last *tea.View
		for time.Now().UnixNano() < st.watchUntil.Load() {
			select {
			case <-st.ended:
				return
			case <-t.C:
			}
			v := st.frame.Load()
			if v == nil || v == last {
				continue
			}
			last = v
			w, h := 0, 0
			if p, _, ok := st.sess.Pty(); ok {
				w, h = clamp(p.Window).Width, clamp(p.Window).Height
			}
			c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			rm.PutFrame(c, name, room.Frame{Content: v.Content, Width: w, Height: h})
			cancel()
		}
	}()
}

// bounded is a session whose pty, and every resize of it, is clamped to
// MaxWidth×MaxHeight, with resizes coalesced: a flood of window changes
// reaches the screen as the latest one, never as a queue.
type bounded struct {
	ssh.Session
	seat  *seat
	winch chan ssh.Window
}

func bound(st *seat) *bounded {
	b := &bounded{Session: st.sess, seat: st, winch: make(chan ssh.Window, 1)}
	_, in, ok := st.sess.Pty()
	if ok {
		go func() {
			for w := range in {
				w = clamp(w)
				for {
					select {
					case b.winch <- w:
					default:
						select { // replace a resize the screen has not taken yet
						case <-b.winch:
						default:
						}
						continue
					}
					break
				}
			}
		}()
	}
	return b
}

func (b *bounded) Pty() (ssh.Pty, <-chan ssh.Window, bool) {
	p, _, ok := b.Session.Pty()
	p.Window = clamp(p.Window)
	return p, b.winch, ok
}

func clamp(w ssh.Window) ssh.Window {
	w.Width = min(max(w.Width, 1), MaxWidth)
	w.Height = min(max(w.Height, 1), MaxHeight)
	return w
}

// progressFile is where participant name's progress is kept without a room.
func (s *Server) progressFile(name string) (string, error) {
	if s.cfg.ProgressDir != "" {
		return progress.ParticipantIn(s.cfg.ProgressDir, name, s.cfg.LessonsDir), nil
	}
	return progress.Participant(name, s.cfg.LessonsDir)
}
