package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rmlab/lab/progress"
	"github.com/rmlab/lab/room"
	"github.com/rmlab/lab/workshop"
)

const serveUsage = `usage: lab serve [--listen ADDR] [--host-key FILE] [--seats N] [--password-env VAR]
                 [--participant-keys FILE] [--instructor-keys FILE] [--room NAME]
                 [--idle D] [--login-timeout D] [--own-broker] [--lessons DIR] [service flags]

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
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage+"\nflags:\n")
		fs.PrintDefaults()
	}
	g.flags(fs)
	listen := fs.String("listen", "127.0.0.1:2222", "address to accept SSH on")
	hostKey := fs.String("host-key", "", "host key file, created on first start (default: the state directory)")
	seats := fs.Int("seats", 0, "participants at once (default: what MySQL's free connections hold, at most 20)")
	passEnv := fs.String("password-env", "LAB_WORKSHOP_PASSWORD", "environment variable holding the workshop password")
	keys := fs.String("participant-keys", "", "authorized_keys file of participants who log in by key")
	instructorKeys := fs.String("instructor-keys", "", "authorized_keys file of the keys that open the room: ssh instructor@HOST")
	idle := fs.Duration("idle", 30*time.Minute, "end a session after this long with no key pressed (keepalives do not count)")
	loginTimeout := fs.Duration("login-timeout", 30*time.Second, "close a connection that has not logged in and opened its screen this long after connecting")
	maxWorkers := fs.Int("max-workers", 8, "worker processes one participant may have alive (every lesson runs within 8: the replay test runs them all under it)")
	ownBroker := fs.Bool("own-broker", false, "let participants' lessons start RabbitMQ nodes of their own (lesson 14's restart, lesson 19's three nodes: about 150 MB and seconds of a core per node)")
	roomName := fs.String("room", "", "keep the room's state in MySQL (lab_room_NAME), shared by every lab serve of the room")
	if err := fs.Parse(interleave(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // asked for: the usage is the answer
		}
		return 2
	}
	if g.lessons != "" {
		_ = progress.RememberLessons(g.lessons) // for lab clean, in any participant's namespace
	}
	if *hostKey == "" {
		dir, err := progress.StateDir()
		if err != nil {
			fmt.Fprintln(stderr, "lab serve: no state directory for the host key; give --host-key FILE:", err)
			return 2
		}
		*hostKey = filepath.Join(dir, "rmlab", "workshop", "ssh_host_ed25519")
	}
	cfg := workshop.Config{HostKey: *hostKey, Password: os.Getenv(*passEnv), IdleTimeout: *idle, LoginTimeout: *loginTimeout,
		MaxWorkers: *maxWorkers, Binary: binary(), Lang: g.lang, LessonsDir: g.lessons, Log: stderr}
	// The password is in this process's memory now; every worker process
	// a participant's lesson starts inherits the environment, so it goes.
	os.Unsetenv(*passEnv)
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
	// Each participant's lab holds up to perLab connections: without
	// --seats, take what the server holds (a stock MySQL's 151 holds about
	// 17); refuse --seats the server cannot hold, and say what would.
	free, detail, err := connectionRoom(ctx, svc)
	if err != nil {
		fmt.Fprintf(stderr, "lab serve: how many labs MySQL can hold: %v\n", err)
		return 1
	}
	if *seats == 0 {
		*seats = min(free, 20)
		if *seats < 1 {
			fmt.Fprintf(stderr, "lab serve: MySQL has no room for a participant (%s)\n  fix: SET GLOBAL max_connections = %d\n", detail, maxConnections(ctx, svc)+perLab*20+10)
			return 1
		}
		fmt.Fprintf(stdout, "lab serve: %d seats: what MySQL's free connections hold (%s); --seats N asks for another number\n", *seats, detail)
	} else if free < *seats {
		fmt.Fprintf(stderr, "lab serve: MySQL cannot hold %d seats (%s)\n  fix: SET GLOBAL max_connections = %d; or fewer --seats\n",
			*seats, detail, maxConnections(ctx, svc)+(*seats-free)*perLab+10)
		return 1
	}
	cfg.Seats = *seats
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
