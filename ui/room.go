package ui

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rmlab/lab/room"
)

// RoomView is the instructor's screen (`ssh instructor@HOST` on a `lab
// serve --room`): every participant of the room, those failing first, then
// those on their step longest; the class's answers at each predict step;
// and a command line that steers the room on every server of it.
type RoomView struct {
	ctx    context.Context
	room   *room.Room
	st     *Styles
	width  int
	height int
	gen    int // tags the poll, so a stale answer is dropped
	parts  []room.Participant
	tally  map[string]map[string]map[string]int
	err    error
	typing bool
	input  string
	status string
}

// NewRoom is the instructor's screen on room r.
func NewRoom(ctx context.Context, r *room.Room) *RoomView {
	return &RoomView{ctx: ctx, room: r, st: NewStyles(true, true), width: 100, height: 30}
}

type roomDataMsg struct {
	gen   int
	parts []room.Participant
	tally map[string]map[string]map[string]int
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
		t, err := r.Tally(c)
		return roomDataMsg{gen: gen, parts: ps, tally: t, err: err}
	}
}

func (v *RoomView) Init() tea.Cmd { return tea.Batch(tea.RequestBackgroundColor, v.fetch()) }

func (v *RoomView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
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
			v.parts, v.tally = msg.parts, msg.tally
		}
		gen := v.gen
		return v, tea.Tick(roomPoll, func(time.Time) tea.Msg { return roomTickMsg{gen: gen} })
	case roomTickMsg:
		if msg.gen == v.gen {
			return v, v.fetch()
		}
	case roomSentMsg:
		if msg.err != nil {
			v.status = "not sent: " + msg.err.Error()
		} else {
			v.status = "sent: " + msg.what + " (every server of the room carries it out within a second)"
		}
	case tea.KeyPressMsg:
		return v, v.key(msg)
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
	switch s {
	case "q", "ctrl+c":
		return tea.Quit
	case ":":
		v.typing, v.status = true, ""
	case "r":
		v.gen++
		return v.fetch()
	}
	return nil
}

// send parses a command line: goto N [NAME], say TEXT, end NAME.
func (v *RoomView) send(line string) tea.Cmd {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	var c room.Command
	switch {
	case f[0] == "goto" && (len(f) == 2 || len(f) == 3):
		c = room.Command{Kind: room.Goto, Arg: f[1]}
		if len(f) == 3 {
			c.Target = f[2]
		}
	case f[0] == "say" && len(f) > 1:
		c = room.Command{Kind: room.Say, Arg: strings.TrimSpace(strings.TrimPrefix(line, "say"))}
	case f[0] == "end" && len(f) == 2:
		c = room.Command{Kind: room.End, Target: f[1]}
	case f[0] == "reset":
		v.status = "reset a participant from a shell: lab room --room " + v.room.Name + " --reset NAME (it also cleans their namespace)"
		return nil
	default:
		v.status = "commands: goto N [NAME], say TEXT, end NAME"
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
	view := tea.NewView(v.render())
	view.AltScreen = true
	view.WindowTitle = "lab room " + v.room.Name
	return view
}

func (v *RoomView) render() string {
	st := v.st
	var b strings.Builder
	failing := 0
	for _, p := range v.parts {
		if p.Failed > 0 {
			failing++
		}
	}
	fmt.Fprintf(&b, "%s\n", st.Header.Render(fmt.Sprintf(" room %s: %d participants, %d with a failed step ", v.room.Name, len(v.parts), failing)))
	if v.err != nil {
		b.WriteString(st.Bad.Render("cannot read the room: "+v.err.Error()) + "\n")
	}
	b.WriteString(st.Bold.Render(fmt.Sprintf("%-16s %-28s %7s %8s %6s  %s", "participant", "lesson", "step", "on step", "failed", "ledger verdicts")) + "\n")
	rows := v.height - 8 - v.tallyLines()
	for i, p := range v.parts {
		if i >= max(rows, 3) {
			fmt.Fprintf(&b, "%s\n", st.Dim.Render(fmt.Sprintf("… and %d more", len(v.parts)-i)))
			break
		}
		line := fmt.Sprintf("%-16s %-28s %3d/%-3d %8s %6d  %s", p.Name, p.Lesson, p.Step, p.Steps, p.OnStep.Round(time.Second), p.Failed, p.Verdicts)
		if p.Failed > 0 {
			line = st.Bad.Render(line)
		}
		b.WriteString(fitLine(line, v.width) + "\n")
	}
	if len(v.parts) == 0 {
		b.WriteString(st.Dim.Render("nobody yet: participants run ssh -p PORT NAME@HOST") + "\n")
	}
	if lines := v.tallyText(); lines != "" {
		b.WriteString("\n" + st.Bold.Render("the class's predictions") + "\n" + lines)
	}
	b.WriteString("\n")
	switch {
	case v.typing:
		b.WriteString(st.Accent.Render(": "+v.input) + st.Dim.Render("_   enter sends, esc cancels"))
	case v.status != "":
		b.WriteString(st.Status.Render(v.status))
	default:
		b.WriteString(st.Dim.Render(": command (goto N [NAME], say TEXT, end NAME)   r refresh   q quit"))
	}
	return b.String()
}

func (v *RoomView) tallyLines() int { return strings.Count(v.tallyText(), "\n") + 2 }

func (v *RoomView) tallyText() string {
	var ids []string
	for id := range v.tally {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		var names []string
		for n := range v.tally[id] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			answers := v.tally[id][n]
			var opts []string
			total := 0
			for o, c := range answers {
				opts = append(opts, o)
				total += c
			}
			sort.Strings(opts)
			var parts []string
			for _, o := range opts {
				parts = append(parts, fmt.Sprintf("%s %d of %d", o, answers[o], total))
			}
			line := fmt.Sprintf("  %s / %s:  %s", id, n, strings.Join(parts, ", "))
			b.WriteString(fitLine(line, v.width) + "\n")
		}
	}
	return b.String()
}
