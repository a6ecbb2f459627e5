package ui

// The instructor's presentation (present N) and the mirror of one
// participant's screen (watch NAME): what the room screen sends and reads.

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/labs"
)

// routePresent routes a message while a lesson is presented: the room's
// own messages (its polls, the publisher's ticks) stay with the room; keys
// and everything else go to the presented lesson, but q and ctrl+c end
// the presentation rather than the instructor's session.
func (v *RoomView) routePresent(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case roomDataMsg, roomTickMsg, roomSentMsg, frameMsg, framePollMsg, watchRenewMsg, watchSentMsg:
		return nil, true
	case presentTickMsg:
		if msg.gen != v.presGen {
			return nil, false
		}
		return v.publishPresented(), false
	case tea.KeyPressMsg:
		if s := msg.String(); s == "q" || s == "ctrl+c" {
			return v.endPresent(), false
		}
	case tea.WindowSizeMsg:
		v.width, v.height = msg.Width, msg.Height
	}
	var cmd tea.Cmd
	v.presenter, cmd = v.presenter.Update(msg)
	return cmd, false
}

// startPresent runs lesson id on this side and tells every server of the
// room to show it, read-only, on every participant's screen.
func (v *RoomView) startPresent(id string) tea.Cmd {
	if v.Present == nil {
		v.status = "this server cannot present (no lesson runner)"
		return nil
	}
	l := labs.Find(v.lessons, id)
	if l == nil {
		v.status = "present " + id + ": no such lesson (a number or an id from lab list)"
		return nil
	}
	m, stop, err := v.Present(v.ctx, l.ID)
	if err != nil {
		v.status = "present " + id + ": " + err.Error()
		return nil
	}
	v.presenter, v.presStop, v.presenting, v.presLast = m, stop, l.ID, ""
	v.presGen++
	var size tea.Cmd
	v.presenter, size = v.presenter.Update(tea.WindowSizeMsg{Width: v.width, Height: v.height})
	gen := v.presGen
	return tea.Batch(m.Init(), size, v.sendCmd(room.Command{Kind: room.Present, Arg: l.ID}),
		tea.Tick(presentPublish, func(time.Time) tea.Msg { return presentTickMsg{gen: gen} }))
}

// endPresent gives every participant their own screen back.
func (v *RoomView) endPresent() tea.Cmd {
	if v.presStop != nil {
		v.presStop()
	}
	v.presenter, v.presStop, v.presenting = nil, nil, ""
	v.presGen++
	v.status = v.tx().PresentEnd
	return v.sendCmd(room.Command{Kind: room.Present, Arg: "off"})
}

// publishPresented writes the presented screen to the room when it changed,
// then ticks again.
func (v *RoomView) publishPresented() tea.Cmd {
	frame := v.presenter.View().Content
	gen, r, ctx := v.presGen, v.room, v.ctx
	tick := tea.Tick(presentPublish, func(time.Time) tea.Msg { return presentTickMsg{gen: gen} })
	if frame == v.presLast {
		return tick
	}
	v.presLast = frame
	w, h := v.width, v.height
	return tea.Batch(tick, func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		r.PutFrame(c, room.Presenter, room.Frame{Content: frame, Width: w, Height: h})
		return nil
	})
}

func (v *RoomView) sendCmd(c room.Command) tea.Cmd {
	r, ctx := v.room, v.ctx
	return func() tea.Msg {
		cc, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		return roomSentMsg{what: c.Kind + " " + c.Arg, err: r.Send(cc, c)}
	}
}

// framePoll is how often the mirror reads the watched screen again.
const framePoll = 500 * time.Millisecond

// pollFrame reads the watched participant's screen, bounded.
func (v *RoomView) pollFrame() tea.Cmd {
	gen, r, ctx, name := v.watchGen, v.room, v.ctx, v.watching
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		f, ok, err := r.Frame(c, name)
		return frameMsg{gen: gen, frame: f, ok: ok, err: err}
	}
}

// renewWatch asks the participant's server to keep publishing; its answer
// (watchSentMsg) schedules the next ask before that runs out, while the
// mirror is open.
func (v *RoomView) renewWatch() tea.Cmd {
	gen, r, ctx, name := v.watchGen, v.room, v.ctx, v.watching
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		r.Send(c, room.Command{Kind: room.Watch, Target: name, Arg: time.Now().Add(room.WatchFor).UTC().Format(time.RFC3339)})
		return watchSentMsg{gen: gen}
	}
}
