package main

import (
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/workshop"
	"github.com/rmlab/lab/labs"
)

// roomFlags are what the instructor asks of the room.
type roomFlags struct {
	name, gotoLesson, to, say, end, reset, timer, kind string
	log, json, csv, drop, events                       bool
}

func runRoom(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, g := command("room", `usage: lab room --room NAME [--goto N [--to NAME]] [--say TEXT [--to NAME]] [--end NAME] [--reset NAME]
                [--timer D|off] [--log [--kind logins|refusals|commands]] [--json|--csv] [--events [--csv]] [--drop] [flags]

a workshop room's participants and polls, from its database; steers them on every server of it
`, stderr)
	var f roomFlags
	fs.StringVar(&f.name, "room", "", "the workshop room (as lab serve --room NAME)")
	fs.StringVar(&f.gotoLesson, "goto", "", "send participants to this lesson (number or id)")
	fs.StringVar(&f.to, "to", "", "only this participant (with --goto or --say)")
	fs.StringVar(&f.say, "say", "", "a banner on every participant's screen until they dismiss it")
	fs.StringVar(&f.end, "end", "", "end this participant's session")
	fs.StringVar(&f.reset, "reset", "", "end this participant's session, clean their namespace, remove their logins and forget their progress")
	fs.BoolVar(&f.events, "events", false, "the room's record: every failure, prediction, goto and reset, oldest first (with --csv as CSV)")
	fs.BoolVar(&f.drop, "drop", false, "end the class: every participant's session, namespace and logins, the presented lesson's, then the room itself")
	fs.StringVar(&f.timer, "timer", "", "a countdown on every screen's header (10m; off takes it away)")
	fs.BoolVar(&f.log, "log", false, "the room's log (logins, refusals, ends, commands): its newest 200 lines")
	fs.StringVar(&f.kind, "kind", "", "with --log: only logins (and ends), refusals, or commands")
	fs.BoolVar(&f.json, "json", false, "the room as JSON, for the debrief")
	fs.BoolVar(&f.csv, "csv", false, "the participants as CSV, for the debrief")
	if code, ok := parse(fs, g, args, stderr); !ok {
		return code
	}
	if !noArgs(fs, stderr, "") {
		return 2
	}
	return cmdRoom(ctx, *g, f, stdout, stderr)
}

// cmdRoom is `lab room --room NAME`: the room's participants, those failing
// first, then those on their step longest, and the class's answers at each
// predict step; with --goto N [--to NAME], --say TEXT or --end NAME it
// steers the room's participants on every server of the room.
func cmdRoom(ctx context.Context, g globals, f roomFlags, stdout, stderr io.Writer) int {
	name := f.name
	if name == "" {
		fmt.Fprintln(stderr, "lab room: name the room: lab room --room NAME (as lab serve --room NAME)")
		return 2
	}
	g.cfg.NoDocker = true
	svc, code := connect(ctx, g, stderr, true)
	if svc == nil {
		return code
	}
	defer svc.Close()
	rm, err := room.Existing(ctx, svc.MySQL, svc.Config.MySQL, name, "lab room")
	if err != nil {
		fmt.Fprintln(stderr, "lab room:", err)
		return 1
	}
	defer rm.Close()
	if f.kind != "" && !room.LogKind(f.kind).Valid() {
		fmt.Fprintf(stderr, "lab room: --kind %q: use logins, refusals or commands\n", plain.Line(f.kind, 32))
		return 2
	}
	if f.log {
		entries, err := rm.Log(ctx, 200, room.LogKind(f.kind))
		if err != nil {
			fmt.Fprintln(stderr, "lab room:", err)
			return 1
		}
		for _, e := range entries {
			fmt.Fprintf(stdout, "%s  %-28s %s\n", e.At.Format(time.DateTime), e.Server, e.Line) // room.Log made them plain
		}
		return 0
	}
	if f.drop {
		return roomDrop(ctx, g, svc, rm, stdout, stderr)
	}
	cmds, code := roomCommands(ctx, g, f, rm, stderr)
	if code != 0 {
		return code
	}
	if f.reset != "" {
		if code := roomReset(ctx, g, svc, rm, f.reset, stdout, stderr); code != 0 {
			return code
		}
	}
	for _, c := range cmds {
		if err := rm.Send(ctx, c); err != nil {
			fmt.Fprintln(stderr, "lab room:", err)
			return 1
		}
		who := c.Target
		if who == "" {
			who = "everyone"
		}
		rm.Audit(ctx, fmt.Sprintf("lab room: %s %s to %s", c.Kind, room.Plain(c.Arg, 255), who))
		fmt.Fprintf(stdout, "sent %s %s to %s (every lab serve of the room carries it out within a second)\n", c.Kind, room.Plain(c.Arg, 255), who)
	}
	ps, err := rm.Participants(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "lab room:", err)
		return 1
	}
	polls, err := rm.Polls(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "lab room:", err)
		return 1
	}
	var events []room.Event
	if f.json || f.events {
		if events, err = rm.Events(ctx, 100000); err != nil {
			fmt.Fprintln(stderr, "lab room:", err)
			return 1
		}
	}
	if f.events {
		return printEvents(events, f.csv, stdout, stderr)
	}
	return printRoom(name, ps, polls, events, f, stdout, stderr)
}

// printEvents prints the room's record (lab room --events): every
// failure, prediction, goto and reset, oldest first; with --csv, as CSV.
func printEvents(events []room.Event, asCSV bool, stdout, stderr io.Writer) int {
	if asCSV {
		w := csv.NewWriter(stdout)
		w.Write([]string{"at", "participant", "kind", "lesson", "step", "detail"})
		for _, e := range events {
			row := []string{e.At.UTC().Format(time.RFC3339Nano), e.Name, e.Kind, e.Lesson, e.Step, e.Detail}
			for i := range row {
				row[i] = plain.CSV(row[i])
			}
			w.Write(row)
		}
		w.Flush()
		if err := w.Error(); err != nil {
			fmt.Fprintln(stderr, "lab room:", err)
			return 1
		}
		return 0
	}
	for _, e := range events {
		who := cmp.Or(e.Name, "everyone")
		fmt.Fprintf(stdout, "%s  %-16s %-8s %-28s %s  %s\n", e.At.Format(time.DateTime), who, e.Kind, e.Lesson, e.Step, e.Detail)
	}
	return 0
}

// roomCommands are the commands the flags send to every screen of the
// room (--goto, --say, --end, --timer), checked here first.
func roomCommands(ctx context.Context, g globals, f roomFlags, rm *room.Room, stderr io.Writer) ([]room.Command, int) {
	var cmds []room.Command
	// A participant the room has never seen is refused here: a command to
	// nobody would answer "sent" and do nothing.
	for flag, who := range map[string]string{"--to": f.to, "--end": f.end} {
		if who == "" {
			continue
		}
		ps, err := rm.Participants(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "lab room:", err)
			return nil, 1
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		if !slices.Contains(names, who) {
			fmt.Fprintf(stderr, "lab room %s %s: no participant of that name in room %s (its participants: %s)\n",
				flag, plain.Line(who, 32), rm.Name, cmp.Or(strings.Join(names, ", "), "none yet"))
			return nil, 1
		}
	}
	if f.gotoLesson != "" {
		// A lesson nobody has is refused here, not sent to the room to be
		// ignored on every screen: one of this lab's, or one a server of
		// the room serves (its --lessons folder).
		ls, err := loadLessons(g)
		if err != nil && partialLoad(err) == nil {
			printErr(stderr, err)
			return nil, 1
		}
		served, err := rm.Lesson(ctx, f.gotoLesson)
		if err != nil {
			fmt.Fprintln(stderr, "lab room:", err)
			return nil, 1
		}
		if labs.Find(ls, f.gotoLesson) == nil && served == "" {
			fmt.Fprintf(stderr, "lab room --goto %s: no such lesson; give a number or an id from `lab list`\n", f.gotoLesson)
			return nil, 2
		}
		cmds = append(cmds, room.Command{Kind: room.Goto, Arg: f.gotoLesson, Target: f.to})
	}
	if f.say != "" {
		cmds = append(cmds, room.Command{Kind: room.Say, Arg: f.say, Target: f.to})
	}
	if f.end != "" {
		cmds = append(cmds, room.Command{Kind: room.End, Target: f.end})
	}
	if f.timer != "" {
		c, err := room.Parse("timer "+f.timer, nil)
		if err != nil {
			fmt.Fprintf(stderr, "lab room --timer: %v\n", err)
			return nil, 2
		}
		cmds = append(cmds, c)
	}
	return cmds, 0
}

// roomReset ends participant who's session on every server of the room and
// cleans their namespace (lab room --reset).
func roomReset(ctx context.Context, g globals, svc *services.Services, rm *room.Room, who string, stdout, stderr io.Writer) int {
	if p := services.NamespaceProblem(who); p != "" {
		fmt.Fprintf(stderr, "lab room --reset %s: not a participant's name: %s\n", who, p)
		return 2
	}
	fmt.Fprintf(stdout, "ending %s's session, then cleaning namespace %s\n", who, who)
	rm.Audit(ctx, "lab room: reset "+who)
	cl := cleaner.New(ctx, asTheRoomsServers(ctx, svc, rm), labs.BrokerNames(g.lessons), stdout)
	logins := roomLogins(ctx, svc, rm)
	forgot := true
	err := rm.Reset(ctx, who, func(ctx context.Context, ns string) {
		cl.Namespace(ctx, services.Names{NS: ns})
		forgot = forgetLogins(ctx, logins, svc, ns, stdout)
	})
	cl.Close()
	if err != nil {
		fmt.Fprintln(stderr, "lab room:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s starts afresh on their next ssh\n", who)
	if cl.Failed() || !forgot {
		return 1
	}
	return 0
}

// asTheRoomsServers is svc with the broker control the room's servers had:
// a room whose servers ran with --broker-control rabbitmqctl says so, and
// where the broker is this machine's the lab removes their vhosts and
// logins the same way, with no flag of the instructor's.
func asTheRoomsServers(ctx context.Context, svc *services.Services, rm *room.Room) *services.Services {
	if v, _ := rm.Meta(ctx, "broker_control"); v == "rabbitmqctl" && svc.Config.BrokerControl == "" {
		if u, err := url.Parse(svc.Config.AMQP); err == nil && services.IsLocal(u.Hostname()) {
			cp := *svc
			cp.Config.BrokerControl = "rabbitmqctl"
			return &cp
		}
	}
	return svc
}

// roomLogins is how this lab removes the room's participants' logins: as
// its servers made them.
func roomLogins(ctx context.Context, svc *services.Services, rm *room.Room) *workshop.Logins {
	return workshop.ProbeLogins(ctx, asTheRoomsServers(ctx, svc, rm))
}

// forgetLogins removes participant ns's MySQL user, vhost and broker user,
// saying so; false when one was left.
func forgetLogins(ctx context.Context, logins *workshop.Logins, svc *services.Services, ns string, stdout io.Writer) bool {
	if err := logins.Forget(ctx, svc, ns); err != nil {
		fmt.Fprintf(stdout, "  left   %s's logins: %v\n", ns, err)
		return false
	}
	fmt.Fprintf(stdout, "  removed %s's logins (MySQL user %s, vhost %s)\n", ns, services.ParticipantUser(ns), services.ParticipantVhost(ns))
	return true
}

// roomDrop ends the class (lab room --drop): each participant's session
// ends, their namespace is cleaned and their logins removed, the
// presented lesson's namespace is cleaned, and the room's database goes.
func roomDrop(ctx context.Context, g globals, svc *services.Services, rm *room.Room, stdout, stderr io.Writer) int {
	names, err := rm.Names(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "lab room:", err)
		return 1
	}
	rm.Audit(ctx, "lab room: drop")
	cl := cleaner.New(ctx, asTheRoomsServers(ctx, svc, rm), labs.BrokerNames(g.lessons), stdout)
	defer cl.Close()
	logins := roomLogins(ctx, svc, rm)
	left := false
	for _, ns := range names {
		err := rm.Reset(ctx, ns, func(ctx context.Context, ns string) {
			cl.Namespace(ctx, services.Names{NS: ns})
			left = !forgetLogins(ctx, logins, svc, ns, stdout) || left
		})
		if err != nil {
			fmt.Fprintln(stderr, "lab room --drop:", err)
			return 1
		}
	}
	cl.Namespace(ctx, services.Names{NS: room.PresenterNamespace(rm.Name)})
	if cl.Failed() || left {
		fmt.Fprintf(stderr, "lab room --drop: the room %s is kept: some of its participants' things were left (above); run it again once they are free\n", rm.Name)
		return 1
	}
	if err := rm.Drop(ctx, svc.MySQL); err != nil {
		printErr(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "dropped room %s: %d participant(s), their namespaces and logins, and database %s\n", rm.Name, len(names), room.DBName(rm.Name))
	return 0
}

// printRoom prints the room's participants and polls: as JSON, CSV (every
// cell safe for a spreadsheet) or the instructor's table.
func printRoom(name string, ps []room.Participant, polls []room.Poll, events []room.Event, f roomFlags, stdout, stderr io.Writer) int {
	switch {
	case f.json:
		// For the debrief: what the screen shows, whole.
		if err := printJSON(stdout, struct {
			Room         string             `json:"room"`
			Participants []room.Participant `json:"participants"`
			Polls        []room.Poll        `json:"polls"`
			Events       []room.Event       `json:"events"` // the whole record: what a goto or reset never rewrites
		}{name, ps, polls, events}); err != nil {
			fmt.Fprintln(stderr, "lab room:", err)
			return 1
		}
		return 0
	case f.csv:
		w := csv.NewWriter(stdout)
		w.Write([]string{"participant", "state", "lesson", "step", "steps", "on_step_s", "passed", "failed", "fail_step", "fail_why", "verdicts", "server", "updated", "challenges",
			"failed_all", "first_fail_step", "first_fail_why"})
		for _, p := range ps {
			row := []string{p.Name, p.State(), p.Lesson, strconv.Itoa(p.Step), strconv.Itoa(p.Steps), strconv.Itoa(int(p.OnStep.Seconds())),
				strconv.Itoa(p.Passed), strconv.Itoa(p.Failed), p.FailStep, p.FailWhy, p.Verdicts, p.Server, p.Updated.UTC().Format(time.RFC3339), p.ChallengeLine(),
				strconv.Itoa(p.FailedAll), p.FirstFailStep, p.FirstFailWhy}
			for i := range row {
				row[i] = plain.CSV(row[i]) // a spreadsheet runs a cell that starts a formula
			}
			w.Write(row)
		}
		w.Flush()
		if err := w.Error(); err != nil {
			fmt.Fprintln(stderr, "lab room:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "room %s: %d participant(s)\n", name, len(ps))
	fmt.Fprintf(stdout, "  %-16s %-8s %-28s %7s %9s %6s  %s\n", "participant", "state", "lesson", "step", "on step", "failed", "failing step / ledger verdicts  [server]")
	for _, p := range ps {
		last := p.Verdicts
		if p.FailStep != "" {
			// The first failed step of this attempt: the root cause.
			step, why := p.FailStep, p.FailWhy
			if p.FirstFailStep != "" {
				step, why = p.FirstFailStep, p.FirstFailWhy
			}
			last = step + ": " + why
		}
		fmt.Fprintf(stdout, "  %-16s %-8s %-28s %3d/%-3d %9s %6d  %s  [%s]\n", p.Name, p.State(), p.Lesson, p.Step, p.Steps,
			p.OnStep.Round(time.Second), p.Failed, last, p.Server)
		if c := p.ChallengeLine(); c != "" {
			fmt.Fprintf(stdout, "  %-16s challenges: %s\n", "", c)
		}
	}
	for _, p := range polls {
		var opts []string
		for o := range p.Answers {
			opts = append(opts, o)
		}
		sort.Strings(opts)
		fmt.Fprintf(stdout, "predict %s / %s:", plain.Line(p.Lesson, 64), plain.Line(p.Name, 64))
		for _, o := range opts {
			fmt.Fprintf(stdout, "  %s %d", plain.Line(o, 64), p.Answers[o])
		}
		fmt.Fprintf(stdout, "  (answered %d of %d in this lesson)\n", p.Answered, p.Reached)
	}
	return 0
}
