package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/rmlab/lab/cleaner"
	"github.com/rmlab/lab/progress"
	"github.com/rmlab/lab/room"
	"github.com/rmlab/lab/services"
	"github.com/rmlab/lab/workshop"
)

const serveUsage = `usage: lab serve [--listen ADDR] [--host-key FILE] [--seats N] [--password-env VAR]
                 [--participant-keys FILE] [--instructor-keys FILE] [--room NAME]
                 [--idle D] [--own-broker] [--lessons DIR] [service flags]

Serves the lab's screen over SSH to a workshop: each participant runs
  ssh -p 2222 alice@HOST
and gets the screen in namespace alice (the SSH user name) on this lab's
servers. Participants log in with the workshop password, read from the
environment variable --password-env names (never a flag), or a key from
--participant-keys (authorized_keys format). With --room NAME and
--instructor-keys, ssh instructor@HOST with one of those keys opens the room.
Nothing but the screens is served.
`

// cmdServe is `lab serve`: wiring only; the server is package workshop.
func cmdServe(args []string, stdout, stderr io.Writer) int {
	var g globals
	fs := flag.NewFlagSet("lab serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, serveUsage) }
	g.flags(fs)
	listen := fs.String("listen", "127.0.0.1:2222", "address to accept SSH on")
	hostKey := fs.String("host-key", "", "host key file, created on first start (default: the state directory)")
	seats := fs.Int("seats", 20, "participants at once")
	passEnv := fs.String("password-env", "LAB_WORKSHOP_PASSWORD", "environment variable holding the workshop password")
	keys := fs.String("participant-keys", "", "authorized_keys file of participants who log in by key")
	instructorKeys := fs.String("instructor-keys", "", "authorized_keys file of the keys that open the room: ssh instructor@HOST")
	idle := fs.Duration("idle", 30*time.Minute, "end a session after this long with no key pressed")
	maxWorkers := fs.Int("max-workers", 8, "worker processes one participant may have alive (every lesson runs within 8: the replay test runs them all under it)")
	ownBroker := fs.Bool("own-broker", false, "let participants' lessons start RabbitMQ nodes of their own (lesson 14's restart, lesson 19's three nodes: about 150 MB and seconds of a core per node)")
	roomName := fs.String("room", "", "keep the room's state in MySQL (lab_room_NAME), shared by every lab serve of the room")
	if err := fs.Parse(interleave(args)); err != nil {
		return 2
	}
	if *hostKey == "" {
		dir, err := progress.StateDir()
		if err != nil {
			fmt.Fprintln(stderr, "lab serve: no state directory for the host key; give --host-key FILE:", err)
			return 2
		}
		*hostKey = filepath.Join(dir, "rmlab", "workshop", "ssh_host_ed25519")
	}
	cfg := workshop.Config{HostKey: *hostKey, Seats: *seats, Password: os.Getenv(*passEnv), IdleTimeout: *idle, MaxWorkers: *maxWorkers,
		Binary: binary(), Lang: g.lang, LessonsDir: g.lessons}
	if *keys != "" {
		k, err := workshop.ParseKeys(*keys)
		if err != nil {
			fmt.Fprintln(stderr, "lab serve:", err)
			return 2
		}
		cfg.ParticipantKeys = k
	}
	if *instructorKeys != "" {
		k, err := workshop.ParseKeys(*instructorKeys)
		if err != nil {
			fmt.Fprintln(stderr, "lab serve:", err)
			return 2
		}
		cfg.InstructorKeys = k
	}
	if cfg.Password == "" && len(cfg.ParticipantKeys) == 0 {
		fmt.Fprintf(stderr, "lab serve: no way for participants to log in: export %s=... (the workshop password) or give --participant-keys FILE\n", *passEnv)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g.cfg.NoDocker = true // a workshop's servers are named, never containers of this process
	svc, code := connect(ctx, g, stderr, true)
	if svc == nil {
		return code
	}
	defer svc.Close()
	// Each participant's lab holds up to perLab connections: refuse to start
	// a workshop the server cannot hold, and say what would let it.
	if room, detail, err := connectionRoom(ctx, svc); err == nil && room < *seats {
		var max int
		svc.MySQL.QueryRowContext(ctx, "SELECT @@max_connections").Scan(&max)
		fmt.Fprintf(stderr, "lab serve: MySQL cannot hold %d seats (%s)\n  fix: SET GLOBAL max_connections = %d; or fewer --seats\n",
			*seats, detail, max+(*seats-room)*perLab+10)
		return 1
	}
	svc.MySQL.SetMaxOpenConns(*seats * perLab)
	cfg.Services, cfg.OwnBroker = svc, *ownBroker
	srv, err := workshop.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "lab serve:", err)
		return 1
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "lab serve: listen on %s: %v\n  fix: pick a free address with --listen HOST:PORT\n", *listen, err)
		return 1
	}
	if *roomName != "" {
		rm, err := room.Open(ctx, svc.MySQL, svc.Config.MySQL, *roomName, room.Self(ln.Addr().String()))
		if err != nil {
			fmt.Fprintln(stderr, "lab serve:", err)
			return 1
		}
		defer rm.Close()
		srv.SetRoom(rm)
		fmt.Fprintf(stdout, "lab serve: room %s in database %s; lab room --room %s shows it\n", *roomName, room.DBName(*roomName), *roomName)
	}
	fmt.Fprintf(stdout, "lab serve: %d seats on %s; participants run: ssh -p %s NAME@%s\n", *seats, ln.Addr(), portOf(ln.Addr()), hostOf(*listen))
	go func() {
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(c)
	}()
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(stderr, "lab serve:", err)
		return 1
	}
	return 0
}

func portOf(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

func hostOf(listen string) string {
	h, _, _ := net.SplitHostPort(listen)
	if h == "" || h == "0.0.0.0" || h == "::" {
		return "HOST"
	}
	return h
}

// roomFlags are what the instructor asks of the room.
type roomFlags struct {
	name, gotoLesson, to, say, end, reset string
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
	var cmds []room.Command
	if f.gotoLesson != "" {
		cmds = append(cmds, room.Command{Kind: room.Goto, Arg: f.gotoLesson, Target: f.to})
	}
	if f.say != "" {
		cmds = append(cmds, room.Command{Kind: room.Say, Arg: f.say, Target: f.to})
	}
	if f.end != "" {
		cmds = append(cmds, room.Command{Kind: room.End, Target: f.end})
	}
	if f.reset != "" {
		if p := services.NamespaceProblem(f.reset); p != "" {
			fmt.Fprintf(stderr, "lab room --reset %s: not a participant's name: %s\n", f.reset, p)
			return 2
		}
		fmt.Fprintf(stdout, "ending %s's session, then cleaning namespace %s\n", f.reset, f.reset)
		cl := cleaner.New(ctx, svc, g.lessons, stdout)
		err := rm.Reset(ctx, f.reset, func(ctx context.Context, ns string) { cl.Namespace(ctx, services.Names{NS: ns}) })
		cl.Close()
		if err != nil {
			fmt.Fprintln(stderr, "lab room:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s starts afresh on their next ssh\n", f.reset)
		if cl.Failed() {
			return 1
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
		fmt.Fprintf(stdout, "sent %s %s to %s (every lab serve of the room carries it out within a second)\n", c.Kind, c.Arg, who)
	}
	ps, err := rm.Participants(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "lab room:", err)
		return 1
	}
	fmt.Fprintf(stdout, "room %s: %d participant(s)\n", name, len(ps))
	fmt.Fprintf(stdout, "  %-16s %-28s %7s %9s %6s  %-34s %s\n", "participant", "lesson", "step", "on step", "failed", "ledger verdicts", "server")
	for _, p := range ps {
		fmt.Fprintf(stdout, "  %-16s %-28s %3d/%-3d %9s %6d  %-34s %s\n", p.Name, p.Lesson, p.Step, p.Steps,
			p.OnStep.Round(time.Second), p.Failed, p.Verdicts, p.Server)
	}
	tally, err := rm.Tally(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "lab room:", err)
		return 1
	}
	var lessons []string
	for id := range tally {
		lessons = append(lessons, id)
	}
	sort.Strings(lessons)
	for _, id := range lessons {
		for name, answers := range tally[id] {
			fmt.Fprintf(stdout, "predict %s / %s:", id, name)
			var opts []string
			for o := range answers {
				opts = append(opts, o)
			}
			sort.Strings(opts)
			for _, o := range opts {
				fmt.Fprintf(stdout, "  %s %d", o, answers[o])
			}
			fmt.Fprintln(stdout)
		}
	}
	return 0
}
