package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/workshop"
)

const serveUsage = `usage: lab serve [--listen ADDR] [--advertise HOST:PORT] [--host-key FILE] [--seats N] [--password-file FILE | --password-env VAR]
                 [--participant-keys FILE] [--instructor-keys FILE] [--room NAME]
                 [--idle D] [--login-timeout D] [--own-broker] [--share-logins] [--keep-logins D] [--lessons DIR] [service flags]

Serves the lab's screen over SSH to a workshop: each participant runs
  ssh -p 2222 alice@HOST
and gets the screen in namespace alice (the SSH user name) on this lab's
servers. Participants log in with the workshop password, read from the
file --password-file names (or the environment variable --password-env
names; never a flag), or a key from
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
	advertise := fs.String("advertise", "", "HOST:PORT participants reach, when it is not --listen's (a published container port, a NAT); only said, never listened on")
	hostKey := fs.String("host-key", "", "host key file, created on first start (default: the state directory)")
	seats := fs.Int("seats", 0, "participants at once (default: what MySQL's free connections hold, at most 20)")
	passEnv := fs.String("password-env", "LAB_WORKSHOP_PASSWORD", "environment variable holding the workshop password")
	passFile := fs.String("password-file", "", "file holding the workshop password, its first line (a descriptor too: /dev/fd/3); wins over --password-env")
	keys := fs.String("participant-keys", "", "authorized_keys file of participants who log in by key")
	instructorKeys := fs.String("instructor-keys", "", "authorized_keys file of the keys that open the room: ssh instructor@HOST")
	idle := fs.Duration("idle", 30*time.Minute, "end a session after this long with no key pressed (keepalives do not count)")
	loginTimeout := fs.Duration("login-timeout", 30*time.Second, "close a connection that has not logged in and opened its screen this long after connecting")
	maxWorkers := fs.Int("max-workers", 8, "worker processes one participant may have alive (every lesson runs within 8: the replay test runs them all under it)")
	ownBroker := fs.Bool("own-broker", false, "let participants' lessons start RabbitMQ nodes of their own (lesson 14's restart, lesson 19's three nodes: about 150 MB and seconds of a core per node)")
	roomName := fs.String("room", "", "keep the room's state in MySQL (lab_room_NAME), shared by every lab serve of the room")
	shareLogins := fs.Bool("share-logins", false, "serve even where participants can only share the lab's own MySQL or RabbitMQ login (a class that trusts itself)")
	keepLogins := fs.Duration("keep-logins", 0, "on stopping, keep the participants' logins this long for a class that resumes (with --room; the room's next lab serve removes them once past, lab room --drop at once)")
	if err := fs.Parse(interleave(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // asked for: the usage is the answer
		}
		return 2
	}
	if stopAfterParse(fs) {
		return 0
	}
	if _, _, err := net.SplitHostPort(*advertise); *advertise != "" && err != nil {
		fmt.Fprintf(stderr, "lab serve --advertise %q: give HOST:PORT, the address participants reach (%v)\n", *advertise, err)
		return 2
	}
	if *keepLogins > 0 && *roomName == "" {
		fmt.Fprintln(stderr, "lab serve: --keep-logins needs --room NAME: the room keeps when the logins expire")
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
	password := ""
	switch {
	case *passFile != "":
		pw, err := readPassword(*passFile)
		if err != nil {
			fmt.Fprintf(stderr, "lab serve: --password-file: %v\n  fix: give a file whose first line is the workshop password\n", err)
			return 2
		}
		password = pw
	case os.Getenv(*passEnv) != "":
		// os.Unsetenv leaves the value readable in /proc/PID/environ for
		// the process's life: start again without it, the password passed
		// through a pipe instead. Only if that cannot be done, go on with
		// it unset in the Go environment (workers never inherit it).
		if err := reexecWithoutPassword(*passEnv); err != nil {
			fmt.Fprintf(stderr, "lab serve: the password stays readable in this process's /proc environ (%v); --password-file avoids it\n", err)
		}
		password = os.Getenv(*passEnv)
		os.Unsetenv(*passEnv)
	}
	cfg := workshop.Config{HostKey: *hostKey, Password: password, IdleTimeout: *idle, LoginTimeout: *loginTimeout,
		MaxWorkers: *maxWorkers, Binary: binary(), Lang: g.lang, LessonsDir: g.lessons, Log: stderr}
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
		fmt.Fprintf(stderr, "lab serve: no way for participants to log in: give --password-file FILE (the workshop password), export %s=..., or give --participant-keys FILE\n", *passEnv)
		return 2
	}
	ctx, stop := stopContext()
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
	if shared := srv.Shared(); len(shared) > 0 && !*shareLogins {
		// Handing out the lab's own logins lets one participant read and
		// purge another's queues and rows: not without being asked.
		fmt.Fprintf(stderr, "lab serve: participants would share the lab's own logins, so any of them could read and change another's data:\n")
		for _, w := range shared {
			fmt.Fprintf(stderr, "  %s\n", w)
		}
		fmt.Fprintf(stderr, "  fix: give the lab's logins what the lines above ask, or --share-logins to accept it (a class that trusts itself)\n")
		srv.Shutdown(context.Background())
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "lab serve: listen on %s: %v\n  fix: pick a free address with --listen HOST:PORT\n", *listen, err)
		return 1
	}
	var rm *room.Room
	if *roomName != "" {
		if rm, err = room.Open(ctx, svc.MySQL, svc.Config.MySQL, *roomName, room.Self(ln.Addr().String())); err != nil {
			fmt.Fprintln(stderr, "lab serve:", err)
			return 1
		}
		defer rm.Close()
		if n, until, err := srv.ForgetExpired(ctx, rm); err != nil {
			fmt.Fprintf(stderr, "lab serve: the logins a stopped class kept until %s: %v\n", until, err)
		} else if n > 0 {
			fmt.Fprintf(stdout, "lab serve: removed the logins of %d participant(s) a stopped class kept until %s\n", n, until)
		}
		srv.SetRoom(rm)
		fmt.Fprintf(stdout, "lab serve: room %s in database %s; lab room --room %s shows it\n", *roomName, room.DBName(*roomName), *roomName)
	}
	host, port := hostOf(*listen), portOf(ln.Addr())
	if *advertise != "" {
		_, port, _ = net.SplitHostPort(*advertise) // checked at the start
		host = hostOf(*advertise)
	}
	fmt.Fprintf(stdout, "lab serve: %d seats on %s; participants run: ssh -p %s NAME@%s\n", *seats, ln.Addr(), port, host)
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- srv.Shutdown(c)
	}()
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(stderr, "lab serve:", err)
		return 1
	}
	// Serve returns as the listener closes, before the sessions end:
	// returning now would end the process before each participant is told
	// why and their screen has closed.
	if err := <-stopped; err != nil {
		fmt.Fprintln(stderr, "lab serve:", err)
		return 1
	}
	fmt.Fprintln(stderr, "lab serve: stopped: every session ended, told why, its workers gone")
	if made := srv.Made(); len(made) > 0 && *keepLogins > 0 {
		until := time.Now().Add(*keepLogins).UTC()
		if err := rm.SetMeta(context.Background(), "logins_until", until.Format(time.RFC3339)); err != nil {
			fmt.Fprintf(stderr, "lab serve: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "lab serve: kept the logins of %d participant(s) until %s (the room's next lab serve removes them then; lab room --drop at once)\n", len(made), until.Format(time.DateTime))
	} else if len(made) > 0 {
		// No participant's login outlives the class.
		c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := srv.ForgetMade(c); err != nil {
			fmt.Fprintf(stderr, "lab serve: some participants' logins were left (lab room --drop, or lab clean, removes them): %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "lab serve: removed the logins it made for %d participant(s) (MySQL users, vhosts)\n", len(made))
	}
	return 0
}

// readPassword is the first line of file (a path, or /dev/fd/N).
func readPassword(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimRight(line, "\r")
	if line == "" {
		return "", fmt.Errorf("%s: its first line is empty", file)
	}
	return line, nil
}

// reexecWithoutPassword starts this lab serve again in its own process
// (same pid), without the variable env in its environment, the password
// on a pipe it reads as --password-file /dev/fd/N. It returns only on
// failure.
func reexecWithoutPassword(env string) error {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		return errors.New("not started as lab serve")
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // no close-on-exec: the new image reads p[0]
		return err
	}
	if _, err := syscall.Write(p[1], []byte(os.Getenv(env)+"\n")); err != nil {
		return err
	}
	syscall.Close(p[1])
	var kept []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, env+"=") {
			kept = append(kept, kv)
		}
	}
	args := append([]string{os.Args[0], "serve", "--password-file", fmt.Sprintf("/dev/fd/%d", p[0])}, os.Args[2:]...)
	return syscall.Exec(exe, args, kept)
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
