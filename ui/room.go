package ui

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/labs"
)

// RoomView is the instructor's screen (`ssh instructor@HOST` on a `lab
// serve --room`): every participant of the room, those failing first, then
// those on their step longest; the class's answers at each predict step;
// and a command line that steers the room on every server of it.
type RoomView struct {
	Lang    string // en or zh: the room screen's words
	ctx     context.Context
	room    *room.Room
	lessons []*lab.Lesson // for lesson numbers and the article's answers
	st      *Styles
	width   int
	height  int
	gen     int // tags the poll, so a stale answer is dropped
	parts   []room.Participant
	polls   []room.Poll
	err     error
	typing  bool
	input   string
	status  string
	top     int        // the first participant row shown
	pageLen int        // how many participants the last frame showed
	filter  roomFilter // which participants show
	answers bool       // the article's answers revealed
	// watch NAME: a live, read-only mirror of one participant's screen.
	watching string
	frame    room.Frame
	hasFrame bool
	watchGen int // tags the mirror's poll and renewal
	// projector: the room for a projector, with no names.
	projector bool
	// Present starts lesson id on the instructor's side for present N
	// (lab serve sets it): its model and what closes its run.
	Present func(ctx context.Context, id string) (tea.Model, func(), error)
	// Reset ends a participant's session, cleans their namespace and
	// forgets their progress (reset NAME; lab serve sets it).
	Reset func(ctx context.Context, name string) error
	// Log records a command the instructor typed (lab serve writes it to
	// its log and the room's, as lab room's commands are).
	Log        func(line string)
	presenter  tea.Model
	presStop   func()
	presenting string // the lesson presented, "" when none
	presGen    int    // tags the presented screen's publisher
	presLast   string // the frame last published
}

type presentTickMsg struct{ gen int }

// presentPublish is how often the presented screen is published.
const presentPublish = 400 * time.Millisecond

type frameMsg struct {
	gen   int
	frame room.Frame
	ok    bool
	err   error
}

type framePollMsg struct{ gen int }

type watchRenewMsg struct{ gen int }

type watchSentMsg struct{ gen int }

// roomFilter picks the participants the table shows.
type roomFilter int

const (
	showAll roomFilter = iota
	showHelp
	showOffline
	showDone
)

func (f roomFilter) keep(p room.Participant) bool {
	switch f {
	case showHelp:
		return p.Online && !p.Done && (p.FailStep != "" || p.Stuck)
	case showOffline:
		return !p.Online
	case showDone:
		return p.Online && p.Done
	}
	return true
}

// NewRoom is the instructor's screen on room r; lessons give the lesson
// numbers goto takes and the article's answers to the polls.
func NewRoom(ctx context.Context, r *room.Room, lessons []*lab.Lesson) *RoomView {
	return &RoomView{ctx: ctx, room: r, lessons: lessons, st: NewStyles(true, true), width: 100, height: 30}
}

type roomDataMsg struct {
	gen   int
	parts []room.Participant
	polls []room.Poll
	err   error
}

type roomTickMsg struct{ gen int }

type roomSentMsg struct {
	what string
	err  error
}

// roomPoll is how often the room is read again.
const roomPoll = 2 * time.Second

// fetch reads the room as a command, bounded: the screen never waits on
// MySQL.
func (v *RoomView) fetch() tea.Cmd {
	gen, r, ctx := v.gen, v.room, v.ctx
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		ps, err := r.Participants(c)
		if err != nil {
			return roomDataMsg{gen: gen, err: err}
		}
		polls, err := r.Polls(c)
		return roomDataMsg{gen: gen, parts: ps, polls: polls, err: err}
	}
}

func (v *RoomView) Init() tea.Cmd { return tea.Batch(tea.RequestBackgroundColor, v.fetch()) }

func (v *RoomView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if v.presenter != nil {
		if cmd, mine := v.routePresent(msg); !mine {
			return v, cmd
		}
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		v.width, v.height = msg.Width, msg.Height
	case tea.BackgroundColorMsg:
		v.st = NewStyles(msg.IsDark(), true)
	case roomDataMsg:
		if msg.gen != v.gen {
			return v, nil
		}
		v.err = msg.err
		if msg.err == nil {
			v.parts, v.polls = msg.parts, msg.polls
		}
		gen := v.gen
		return v, tea.Tick(roomPoll, func(time.Time) tea.Msg { return roomTickMsg{gen: gen} })
	case roomTickMsg:
		if msg.gen == v.gen {
			return v, v.fetch()
		}
	case roomSentMsg:
		if msg.err != nil {
			v.status = fmt.Sprintf(v.tx().NotSent, msg.err)
		} else {
			v.status = fmt.Sprintf(v.tx().Sent, msg.what)
		}
	case tea.KeyPressMsg:
		return v, v.key(msg)
	case frameMsg:
		if msg.gen != v.watchGen {
			return v, nil
		}
		if msg.err == nil && msg.ok {
			v.frame, v.hasFrame = msg.frame, true
		}
		gen := v.watchGen
		return v, tea.Tick(framePoll, func(time.Time) tea.Msg { return framePollMsg{gen: gen} })
	case framePollMsg:
		if msg.gen == v.watchGen {
			return v, v.pollFrame()
		}
	case watchSentMsg:
		if msg.gen == v.watchGen {
			gen := v.watchGen
			return v, tea.Tick(room.WatchFor/2, func(time.Time) tea.Msg { return watchRenewMsg{gen: gen} })
		}
	case watchRenewMsg:
		if msg.gen == v.watchGen {
			return v, v.renewWatch()
		}
	}
	return v, nil
}

func (v *RoomView) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if v.typing {
		switch s {
		case "enter":
			v.typing = false
			line := strings.TrimSpace(v.input)
			v.input = ""
			return v.send(line)
		case "esc":
			v.typing, v.input = false, ""
		case "backspace":
			if r := []rune(v.input); len(r) > 0 {
				v.input = string(r[:len(r)-1])
			}
		default:
			if t := k.Text; t != "" {
				v.input += t
			}
		}
		return nil
	}
	if v.watching != "" {
		switch s {
		case "esc", "q":
			v.watching, v.status = "", ""
			v.watchGen++
			return nil
		case "ctrl+c":
			return tea.Quit
		}
		return nil // the mirror is read-only
	}
	switch s {
	case "q", "ctrl+c":
		return tea.Quit
	case ":":
		v.typing, v.status = true, ""
	case "r":
		v.gen++
		return v.fetch()
	case "down", "j":
		v.top++
	case "up", "k":
		v.top--
	case "pgdown", "space":
		// A page is the participants the screen showed, not its lines: a
		// participant whose why wraps takes several.
		v.top += max(v.pageLen, 1)
	case "pgup":
		v.top -= max(v.pageLen, 1)
	case "home", "g":
		v.top = 0
	case "end", "G":
		v.top = len(v.shown())
	case "f":
		v.filter = (v.filter + 1) % roomFilter(len(v.tx().Filters))
		v.top, v.status = 0, fmt.Sprintf(v.tx().Showing, v.tx().Filters[v.filter])
	case "a":
		v.answers = !v.answers
	case "p":
		v.projector = !v.projector
	}
	return nil
}

// shown are the participants the filter keeps.
func (v *RoomView) shown() []room.Participant {
	var out []room.Participant
	for _, p := range v.parts {
		if v.filter.keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// inRoom reports whether name is one of the room's participants.
func (v *RoomView) inRoom(name string) bool {
	for _, p := range v.parts {
		if p.Name == name {
			return true
		}
	}
	return false
}

// online reports whether participant name has a screen open now.
func (v *RoomView) online(name string) bool {
	for _, p := range v.parts {
		if p.Name == name {
			return p.Online
		}
	}
	return false
}

// rows is how many participant rows fit between the header and the polls.
func (v *RoomView) rows() int { return max(v.height-6-v.pollLines(), 3) }

// send parses a command line (room.Grammar), carries it out, and has
// lab serve log each one it accepted, as lab room's are.
func (v *RoomView) send(line string) tea.Cmd {
	cmd := v.dispatch(line)
	if cmd == nil || v.Log == nil {
		return cmd
	}
	log, plain := v.Log, room.Plain(line, 255)
	return tea.Batch(cmd, func() tea.Msg { log("instructor: " + plain); return nil })
}

// dispatch carries out one command line; nil when it was refused (the
// status line says why).
func (v *RoomView) dispatch(line string) tea.Cmd {
	if strings.TrimSpace(line) == "" {
		return nil
	}
	if f := strings.Fields(line); f[0] == room.Watch {
		if len(f) != 2 {
			v.status = "write watch NAME"
			return nil
		}
		if !v.inRoom(f[1]) {
			v.status = "watch " + room.Plain(f[1], 32) + ": nobody of that name in this room"
			return nil
		}
		if !v.online(f[1]) {
			v.status = "watch " + f[1] + ": " + f[1] + " is offline, no screen to watch (watch again once they are back)"
			return nil
		}
		v.watching, v.hasFrame, v.status = f[1], false, ""
		v.watchGen++
		return tea.Batch(v.renewWatch(), v.pollFrame())
	}
	if f := strings.Fields(line); f[0] == room.Present {
		if len(f) != 2 {
			v.status = "write present N (q ends it)"
			return nil
		}
		return v.startPresent(f[1])
	}
	if f := strings.Fields(line); f[0] == "reset" {
		if len(f) != 2 || v.Reset == nil {
			v.status = "write reset NAME (or, from a shell: lab room --room " + v.room.Name + " --reset NAME)"
			return nil
		}
		name, reset, ctx := f[1], v.Reset, v.ctx
		v.status = "resetting " + name + ": ending their session, then cleaning their namespace…"
		return func() tea.Msg {
			c, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			return roomSentMsg{what: "reset " + name, err: reset(c, name)}
		}
	}
	var names []string
	for _, p := range v.parts {
		names = append(names, p.Name)
	}
	c, err := room.Parse(line, names)
	if err != nil {
		v.status = err.Error()
		return nil
	}
	if c.Kind == room.Goto && len(v.lessons) > 0 && labs.Find(v.lessons, c.Arg) == nil {
		v.status = "goto " + c.Arg + ": no such lesson (a number or an id from lab list)"
		return nil
	}
	r, ctx := v.room, v.ctx
	return func() tea.Msg {
		cc, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		return roomSentMsg{what: line, err: r.Send(cc, c)}
	}
}

func (v *RoomView) View() tea.View {
	if v.presenter != nil {
		return v.presenter.View()
	}
	view := tea.NewView(v.render())
	view.AltScreen = true
	view.WindowTitle = "lab room " + v.room.Name
	return view
}

// lessonName is "13 broker-lost-confirm", the number goto takes.
func (v *RoomView) lessonName(id string) string {
	if l := labs.Find(v.lessons, id); l != nil {
		return fmt.Sprintf("%d %s", l.Number, id)
	}
	return id
}

// lessonNumber is the lesson's number alone, for a narrow screen.
func (v *RoomView) lessonNumber(id string) string {
	if l := labs.Find(v.lessons, id); l != nil {
		return strconv.Itoa(l.Number)
	}
	return id
}

// answer is the article's answer at a lesson's predict step.
func (v *RoomView) answer(lesson, name string) string {
	if l := labs.Find(v.lessons, lesson); l != nil {
		for _, s := range l.Steps() {
			if s.Kind == "predict" && s.Attrs["name"] == name {
				return s.Attrs["answer"]
			}
		}
	}
	return ""
}

func (v *RoomView) pollLines() int {
	if t := v.pollText(); t != "" {
		return strings.Count(t, "\n") + 2
	}
	return 0
}

// pollText lists the polls in lesson order: each option's count, how many
// of those who opened the lesson answered, and the article's answer once
// revealed (a).
func (v *RoomView) pollText() string {
	polls := append([]room.Poll(nil), v.polls...)
	num := func(id string) int {
		if l := labs.Find(v.lessons, id); l != nil {
			return l.Number
		}
		return 1 << 30
	}
	sort.SliceStable(polls, func(i, j int) bool { return num(polls[i].Lesson) < num(polls[j].Lesson) })
	var b strings.Builder
	for _, p := range polls {
		var opts []string
		for o := range p.Answers {
			opts = append(opts, o)
		}
		sort.Strings(opts)
		var parts []string
		for _, o := range opts {
			parts = append(parts, fmt.Sprintf("%s %d", o, p.Answers[o]))
		}
		tx := v.tx()
		line := fmt.Sprintf(tx.PollLine, v.lessonName(p.Lesson), p.Name, strings.Join(parts, ", "), p.Answered, p.Reached)
		if a := v.answer(p.Lesson, p.Name); a != "" {
			if v.answers {
				line += fmt.Sprintf(tx.TheArticle, a)
			} else {
				line += tx.ShowAnswer
			}
		}
		// A poll wraps rather than lose its counts.
		for i, l := range wrapText(line, max(v.width-4, 20)) {
			if i > 0 {
				l = "    " + l
			}
			b.WriteString(cut(l, v.width) + "\n")
		}
	}
	return b.String()
}
