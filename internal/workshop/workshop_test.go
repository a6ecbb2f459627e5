package workshop_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
	"github.com/rmlab/lab/internal/workshop"
	"github.com/rmlab/lab/labs"
)

// The tests mostly wait on SSH sessions and the servers: four at once, the
// ones that time logins or measure memory alone first.
func TestMain(m *testing.M) { labtest.MainParallel(m, 4) }

// workerBinary is the binary the servers start their workers from, as an
// installed lab serve does: lab-worker, built beside the lab.
func workerBinary(t *testing.T) string {
	t.Helper()
	lab := labtest.Lab(t)
	bin := worker.Beside(lab)
	if bin == lab {
		t.Fatal("lab-worker built beside lab is not taken for the same build")
	}
	return bin
}

const password = "workshop-pw-42"

// testEnv is the test's services, in a namespace of its own (labtest.Of);
// its participants and rooms are named from it (who), and its clean-up
// knows the queues of the lessons these tests serve.
func testEnv(t *testing.T) *labtest.Env {
	t.Helper()
	e := labtest.Of(t)
	e.Lessons(labs.BrokerNames("testdata/node-lessons"))
	e.Lessons(labs.BrokerNames("../../ui/testdata/worker-lessons"))
	e.Lessons(labs.BrokerNames("../../ui/testdata/lessons"))
	return e
}

// who is a participant's name (their namespace) in the test's: NS+short,
// so that concurrent runs never share one.
func who(t *testing.T, short string) string { return testEnv(t).Derived(short) }

// roomName is the test's room: its namespace (lab_room_NS).
func roomName(t *testing.T) string { return testEnv(t).NS }

// connectServices reaches the real services for one of a test's servers:
// its own Services value (a server's settings change its Info), sharing the
// test's connections.
func connectServices(t *testing.T) *services.Services {
	t.Helper()
	env := testEnv(t)
	svc := env.Svc.For(env.NS)
	// Participants' RabbitMQ logins through rabbitmqctl cost ~2 s a
	// session; the tests of the logins ask for them (withOwnLogins).
	svc.Config.BrokerControl = ""
	return svc
}

// start runs a workshop server with cfg on a free loopback port, filling
// what every test's server shares (host key, password, services, binary),
// and stops it when the test ends.
func start(t *testing.T, cfg workshop.Config) (string, *workshop.Server) {
	t.Helper()
	cfg.HostKey = filepath.Join(t.TempDir(), "host_ed25519")
	if cfg.ProgressDir == "" {
		cfg.ProgressDir = t.TempDir()
	}
	if cfg.Password == "" {
		cfg.Password = password
	}
	if cfg.Services == nil {
		cfg.Services = connectServices(t)
	}
	cfg.Binary, cfg.Lang = workerBinary(t), "en"
	srv, err := workshop.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(c)
	})
	return ln.Addr().String(), srv
}

// serve starts a workshop server with the real services, progress in a
// temporary folder, and returns its address.
func serve(t *testing.T, seats int) (string, *workshop.Server) { return serveLessons(t, seats, "") }

func serveLessons(t *testing.T, seats int, lessons string) (string, *workshop.Server) {
	t.Helper()
	return start(t, workshop.Config{Seats: seats, LessonsDir: lessons})
}

// terminal is one participant's SSH session with a pty, as `ssh` opens it.
type terminal struct {
	client *gossh.Client
	sess   *gossh.Session
	in     interface{ Write([]byte) (int, error) }
	mu     sync.Mutex
	out    bytes.Buffer
	done   chan error
}

func (tm *terminal) Write(b []byte) (int, error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.Write(b)
}

func (tm *terminal) text() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

func dial(addr, user, pass string) (*gossh.Client, error) {
	return gossh.Dial("tcp", addr, &gossh.ClientConfig{User: user, Auth: []gossh.AuthMethod{gossh.Password(pass)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
}

// connect logs in as user and asks for a shell on a 100×30 terminal.
func connect(t *testing.T, addr, user string) *terminal {
	t.Helper()
	c, err := dial(addr, user, password)
	if err != nil {
		t.Fatalf("%s: %v", user, err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	tm := &terminal{client: c, sess: s, done: make(chan error, 1)}
	s.Stdout, s.Stderr = tm, tm
	in, err := s.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	tm.in = in
	if err := s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() { tm.done <- s.Wait() }()
	return tm
}

func (tm *terminal) until(t *testing.T, what string, cond func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond(tm.text()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; the terminal shows:\n%s", what, tail(tm.text()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (tm *terminal) ended(t *testing.T) {
	t.Helper()
	select {
	case <-tm.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the session did not end; the terminal shows:\n%s", tail(tm.text()))
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

func hasScreen(s string) bool { return strings.Contains(s, "reliable-messaging lab") }

// TestTwoParticipantsGetTheScreenEachInTheirOwnNamespace: alice and bob
// connect with only an SSH client; each gets the lab's screen; the first
// step alice runs creates her database, not bob's; both walk lesson 1 to its
// end by keys at once, each in their own database; q ends her session and
// frees her seat.
func TestTwoParticipantsGetTheScreenEachInTheirOwnNamespace(t *testing.T) {
	t.Parallel()
	addr, srv := serve(t, 2)
	an, bn := who(t, "al"), who(t, "bo")
	alice := connect(t, addr, an)
	bob := connect(t, addr, bn)
	alice.until(t, "alice's screen", hasScreen)
	bob.until(t, "bob's screen", hasScreen)
	if got := strings.Join(srv.Participants(), ","); got != an+","+bn {
		t.Fatalf("participants %s, want %s,%s", got, an, bn)
	}
	db := testEnv(t).Svc.MySQL
	exists := func(name string) bool {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", name).Scan(&n); err != nil {
			t.Fatalf("is %s there: %v", name, err) // an error is no answer, not "absent"
		}
		return n == 1
	}
	alice.in.Write([]byte("\r")) // lesson 1's reset
	deadline := time.Now().Add(15 * time.Second)
	for !exists("blog_idempotency_lab_" + an) {
		if time.Now().After(deadline) {
			t.Fatalf("alice's reset created no blog_idempotency_lab_%s; her terminal:\n%s", an, tail(alice.text()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if exists("blog_idempotency_lab_" + bn) {
		t.Error("alice's step created bob's database")
	}
	// Both walk lesson 1 to its end by keys, at once; each ends with user 7
	// at 20 points in their own database (10, then 10 more from the client
	// that carries on after its 1062: the lesson's unsafe ledger).
	// Enter until both screens say so (a step waiting on a lock takes a
	// key while it waits), at most twice the lesson's steps.
	complete := func(tm *terminal) bool { return strings.Contains(tm.text(), "Lesson complete") }
	for range 2 * lessonSteps(t, "idem-first-processing") {
		if complete(alice) && complete(bob) {
			break
		}
		alice.in.Write([]byte("\r"))
		bob.in.Write([]byte("\r"))
		time.Sleep(600 * time.Millisecond)
	}
	for _, who := range []string{an, bn} {
		var points int
		if err := db.QueryRow("SELECT points FROM blog_idempotency_lab_" + who + ".points_account WHERE user_id=7").Scan(&points); err != nil || points != 20 {
			t.Errorf("%s's user 7 has %d points (%v), want 20", who, points, err)
		}
	}
	for _, tm := range []*terminal{alice, bob} {
		tm.until(t, "the lesson's end", func(s string) bool { return strings.Contains(s, "Lesson complete") })
	}
	alice.in.Write([]byte("q"))
	alice.ended(t)
	deadline = time.Now().Add(5 * time.Second)
	for strings.Join(srv.Participants(), ",") != bn && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := strings.Join(srv.Participants(), ","); got != bn {
		t.Errorf("after alice's q: participants %s, want %s", got, bn)
	}
}

// TestRefusalsSayWhy: a wrong password, a name that cannot be a namespace,
// a second screen of the same participant, the seat after the last, and a
// command instead of the screen are each refused with a clear message.
func TestRefusalsSayWhy(t *testing.T) {
	t.Parallel()
	addr, _ := serve(t, 2)
	if _, err := dial(addr, who(t, "ca"), "not-the-password"); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("a wrong password: %v", err)
	}
	for _, c := range []struct{ user, want string }{
		{"Carol", "cannot be a participant's name: use 1–16 lowercase letters, digits or _"},
		{"root", "cannot be a participant's name: it is reserved"},
		{"carol_r2", "lanes of `lab replay --parallel`"},
	} {
		tm := connect(t, addr, c.user)
		tm.ended(t)
		if !strings.Contains(tm.text(), c.want) {
			t.Errorf("user %s: got %q, want %q", c.user, tm.text(), c.want)
		}
	}
	dave := who(t, "da")
	first := connect(t, addr, dave)
	first.until(t, "dave's screen", hasScreen)
	again := connect(t, addr, dave)
	again.ended(t)
	if !strings.Contains(again.text(), dave+" already has a screen open") {
		t.Errorf("a second screen of dave: %q", again.text())
	}
	erin := connect(t, addr, who(t, "er"))
	erin.until(t, "erin's screen", hasScreen)
	full := connect(t, addr, who(t, "fr"))
	full.ended(t)
	if !strings.Contains(full.text(), "the workshop is full (2 seats)") {
		t.Errorf("the third participant: %q", full.text())
	}
	first.in.Write([]byte("q"))
	first.ended(t)
	c, err := dial(addr, who(t, "gr"), password)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, _ := c.NewSession()
	out, _ := s.CombinedOutput("cat /etc/passwd")
	if !strings.Contains(string(out), "serves the lab's screen only") || strings.Contains(string(out), "root:") {
		t.Errorf("a command: %q", out)
	}
}

// workersOf lists live `lab worker` processes of namespace ns.
func workersOf(ns string) []string { return procsWith("LAB_NAMESPACE="+ns, "worker") }

// procsWith lists the live processes whose environment has kv and whose
// command line contains cmd ("" for any).
func procsWith(kv, cmd string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00"+kv+"\x00")) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			continue // dead, waiting for its reaper
		}
		if c, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); bytes.Contains(c, []byte(cmd)) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestADroppedConnectionLeavesNoWorkerProcess: a participant's consumer is
// paused mid-transaction when their connection drops; the session ends and
// takes the worker with it.
func TestADroppedConnectionLeavesNoWorkerProcess(t *testing.T) {
	t.Parallel()
	addr, srv := serveLessons(t, 2, "../../ui/testdata/worker-lessons")
	drop := who(t, "dr")
	tm := connect(t, addr, drop)
	tm.startWorker(t, drop)
	tm.client.Close() // the connection drops: no q, no goodbye
	deadline := time.Now().Add(15 * time.Second)
	for len(workersOf(drop)) > 0 || len(srv.Participants()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the drop: workers %v, participants %v", workersOf(drop), srv.Participants())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startWorker walks the worker lessons' first lesson on tm's screen (of
// participant name) until its worker runs, paused before its commit.
func (tm *terminal) startWorker(t *testing.T, name string) {
	t.Helper()
	tm.until(t, "the screen", hasScreen)
	for range 3 { // reset, sql, spawn c1 (it pauses before its commit)
		tm.in.Write([]byte("\r"))
		time.Sleep(700 * time.Millisecond)
	}
	for deadline := time.Now().Add(15 * time.Second); len(workersOf(name)) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no worker started; the terminal shows:\n%s", tail(tm.text()))
		}
	}
}

// serveRoom starts a workshop server in room name: its progress and the
// room's rows in MySQL, shared with any other server of the room.
func serveRoom(t *testing.T, name, self string) (string, *room.Room) {
	return serveRoomLessons(t, name, self, "", "")
}

func serveRoomLessons(t *testing.T, name, self, lessons, first string) (string, *room.Room) {
	t.Helper()
	addr, rm, _ := serveRoomServer(t, name, self, lessons, first)
	return addr, rm
}

func serveRoomServer(t *testing.T, name, self, lessons, first string, claimWait ...time.Duration) (string, *room.Room, *workshop.Server) {
	t.Helper()
	svc := connectServices(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rm, err := room.Open(ctx, svc.MySQL, svc.Config.MySQL, name, self)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rm.Close)
	cfg := workshop.Config{Seats: 4, Services: svc, Room: rm, LessonsDir: lessons, Start: first}
	if len(claimWait) > 0 {
		cfg.ClaimWait = claimWait[0]
	}
	addr, srv := start(t, cfg)
	return addr, rm, srv
}

// TestTwoServersOneRoom: two `lab serve` processes' worth of servers on
// different ports, one MySQL, one room: the room shows the participants of
// both at their step, and a participant who reconnects to the other server
// is offered to resume where they were.
func TestTwoServersOneRoom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, rm := serveRoom(t, roomName(t), "server-a")
	b, _ := serveRoom(t, roomName(t), "server-b")
	an, bn := who(t, "al"), who(t, "bo")
	alice := connect(t, a, an)
	bob := connect(t, b, bn)
	alice.until(t, "alice's screen", hasScreen)
	bob.until(t, "bob's screen", hasScreen)
	alice.in.Write([]byte("\r"))
	bob.in.Write([]byte("\r"))
	var ps []room.Participant
	deadline := time.Now().Add(15 * time.Second)
	for {
		ps, _ = rm.Participants(ctx)
		if len(ps) == 2 && ps[0].Step == 1 && ps[1].Step == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the room shows %+v; want %s and %s at step 1", ps, an, bn)
		}
		time.Sleep(100 * time.Millisecond)
	}
	servers := map[string]string{}
	for _, p := range ps {
		servers[p.Name] = p.Server
		if p.Lesson != "idem-first-processing" || p.Steps < 2 || p.Passed != 1 {
			t.Errorf("%s: %+v", p.Name, p)
		}
	}
	if servers[an] != "server-a" || servers[bn] != "server-b" {
		t.Errorf("servers %v", servers)
	}
	alice.in.Write([]byte("q"))
	alice.ended(t)
	again := connect(t, b, an) // the other server
	again.until(t, "the offer to resume on the other server", func(s string) bool { return strings.Contains(s, "You had run 1 of") })
}

// TestTheRoomSteersEveryServersParticipants: "go to lesson 13" sent to the
// room moves participants on both servers, a line reaches every status
// bar, and "end" closes one participant's session.
func TestTheRoomSteersEveryServersParticipants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, rm := serveRoom(t, roomName(t), "server-a")
	b, _ := serveRoom(t, roomName(t), "server-b")
	bn := who(t, "bo")
	alice := connect(t, a, who(t, "al"))
	bob := connect(t, b, bn)
	alice.until(t, "alice's screen", hasScreen)
	bob.until(t, "bob's screen", hasScreen)
	time.Sleep(1500 * time.Millisecond) // both servers' pollers have read where the commands start
	if err := rm.Send(ctx, room.Command{Kind: room.Goto, Arg: "13"}); err != nil {
		t.Fatal(err)
	}
	for _, tm := range []*terminal{alice, bob} {
		tm.until(t, "lesson 13", func(s string) bool { return strings.Contains(s, "the instructor opened lesson 13 for you") })
	}
	if err := rm.Send(ctx, room.Command{Kind: room.Say, Arg: "five minutes left"}); err != nil {
		t.Fatal(err)
	}
	for _, tm := range []*terminal{alice, bob} {
		tm.until(t, "the broadcast", func(s string) bool { return strings.Contains(s, "instructor: five minutes left") })
	}
	if err := rm.Send(ctx, room.Command{Kind: room.End, Target: bn}); err != nil {
		t.Fatal(err)
	}
	bob.ended(t)
	select {
	case <-alice.done:
		t.Fatal("ending bob's session ended alice's")
	case <-time.After(1500 * time.Millisecond):
	}
}

// TestTheRoomOpensOnlyWithAnInstructorsKey: instructor@ with an instructor
// key gets the room's screen with the participants in it; with the
// workshop password it is refused, saying what opens it.
func TestTheRoomOpensOnlyWithAnInstructorsKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	svc := connectServices(t)
	rm, err := room.Open(ctx, svc.MySQL, svc.Config.MySQL, roomName(t), "server-i")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rm.Close)
	pub, _ := ssh.ParsePublicKey(signer.PublicKey().Marshal())
	addr, _ := start(t, workshop.Config{Seats: 3, InstructorKeys: []ssh.PublicKey{pub}, Services: svc, Room: rm})

	pat := who(t, "pa")
	p := connect(t, addr, pat)
	p.until(t, "the participant's screen", hasScreen)
	p.in.Write([]byte("\r"))

	byPassword := connect(t, addr, workshop.Instructor)
	byPassword.ended(t)
	if !strings.Contains(byPassword.text(), "the room opens only with an instructor's key") {
		t.Errorf("instructor by password: %q", byPassword.text())
	}

	_, otherPriv, _ := ed25519.GenerateKey(nil)
	other, _ := gossh.NewSignerFromKey(otherPriv)
	if _, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: workshop.Instructor, Auth: []gossh.AuthMethod{gossh.PublicKeys(other)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second}); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("a key nobody listed: %v", err)
	}
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: workshop.Instructor, Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, _ := c.NewSession()
	tm := &terminal{client: c, sess: s, done: make(chan error, 1)}
	s.Stdout, s.Stderr = tm, tm
	tm.in, _ = s.StdinPipe()
	s.RequestPty("xterm-256color", 30, 120, gossh.TerminalModes{})
	s.Shell()
	// The header may first say 0 participants and then have only its
	// count redrawn: the count and the name are looked for apart.
	tm.until(t, "the room with the participant in it", func(s string) bool {
		return strings.Contains(s, "room "+roomName(t)+": ") && strings.Contains(s, "1 participants") && strings.Contains(s, pat)
	})
	tm.in.Write([]byte(":say hello room\r"))
	p.until(t, "the instructor's line", func(s string) bool { return strings.Contains(s, "instructor: hello room") })
}

// TestAPredictTallyCountsBothParticipantsAnswers: at a predict step alice
// takes the first option and bob the second, on their own screens; the
// room's tally has one of each.
func TestAPredictTallyCountsBothParticipantsAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr, rm := serveRoomLessons(t, roomName(t), "server-t", "../../ui/testdata/lessons", "fixture-predict")
	alice := connect(t, addr, who(t, "al"))
	bob := connect(t, addr, who(t, "bo"))
	for _, tm := range []*terminal{alice, bob} {
		tm.until(t, "the predict step", func(s string) bool { return strings.Contains(s, "Does a confirm mean") })
	}
	alice.in.Write([]byte("\x1b[B")) // down: yes, the first option (nothing is preselected)
	bob.in.Write([]byte("\x1b[B\x1b[B"))
	time.Sleep(300 * time.Millisecond)
	alice.in.Write([]byte("\r"))
	bob.in.Write([]byte("\r")) // no
	var got map[string]int
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		tally, err := rm.Tally(ctx)
		if err == nil {
			got = tally["fixture-predict"]["confirm"]
			if got["yes"] == 1 && got["no"] == 1 {
				return
			}
		}
	}
	t.Fatalf("tally %v, want yes 1 and no 1", got)
}

// lessonSteps counts a built-in lesson's steps.
func lessonSteps(t *testing.T, id string) int {
	t.Helper()
	ls, err := labs.Builtin("en")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.ID == id {
			return len(l.Steps())
		}
	}
	t.Fatalf("no built-in lesson %s", id)
	return 0
}
