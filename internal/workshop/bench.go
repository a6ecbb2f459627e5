package workshop

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
)

// BenchOptions are `lab bench workshop`'s flags.
type BenchOptions struct {
	Sessions int           // participants at once
	Lesson   string        // the lesson each walks (id)
	Keys     int           // keys each presses
	Pace     time.Duration // between keys, as a person presses them
	Binary   string        // the lab binary, for the lessons' workers
	Progress func(string)
	// Room keeps the sessions in a room (lab serve --room): every screen
	// claims its name and beats; Watch also mirrors the first participant
	// as an instructor's watch does (a frame published twice a second,
	// read back twice a second).
	Room, Watch bool
}

// BenchResult is what `lab bench workshop` prints.
type BenchResult struct {
	Sessions  int     `json:"sessions"`
	Keys      int     `json:"keys"`
	P50MS     float64 `json:"key_to_frame_p50_ms"`
	P99MS     float64 `json:"key_to_frame_p99_ms"`
	MaxMS     float64 `json:"key_to_frame_max_ms"`
	CPUPct    float64 `json:"cpu_percent"` // of one core, server and clients (one process) plus the workers
	RSSMB     float64 `json:"rss_mb"`      // the process's peak resident memory
	WallS     float64 `json:"wall_s"`
	Workers   int     `json:"workers_peak"` // lesson worker processes alive at once, at the peak
	Unframed  int     `json:"keys_without_frame"`
	Namespace string  `json:"namespace_prefix"`
}

func (r BenchResult) String() string {
	return fmt.Sprintf("%d sessions, %d keys: key→frame p50 %.1f ms, p99 %.1f ms, max %.1f ms; CPU %.0f%% of a core; peak RSS %.0f MB; peak workers %d; %.1f s",
		r.Sessions, r.Keys, r.P50MS, r.P99MS, r.MaxMS, r.CPUPct, r.RSSMB, r.Workers, r.WallS)
}

// Bench serves the lab over SSH in this process (as `lab serve` does) and opens Sessions real SSH sessions that each walk
// a lesson with key presses, its real steps and workers included; for every
// key it measures the time until the server's next output arrives.
func Bench(ctx context.Context, cfg services.Config, o BenchOptions) (BenchResult, error) {
	if o.Sessions < 1 || o.Keys < 1 {
		return BenchResult{}, fmt.Errorf("lab bench workshop: --sessions and --keys must be at least 1")
	}
	cfg.NoDocker = true
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	svc, err := services.Connect(c, cfg, true)
	cancel()
	if err != nil {
		return BenchResult{}, err
	}
	defer svc.Close()
	svc.MySQL.SetMaxOpenConns(o.Sessions * 8)
	state, err := os.MkdirTemp("", "labbenchws")
	if err != nil {
		return BenchResult{}, err
	}
	defer os.RemoveAll(state)
	os.Setenv("XDG_STATE_HOME", state) // the participants' progress, thrown away after
	pw := rand.Text()
	// Every client dials from 127.0.0.1 in the same second, as a class
	// behind one NAT all pressing enter at once: the per-address cap on
	// connections not yet logged in (64 by default) would refuse the 65th.
	srv, err := New(Config{HostKey: filepath.Join(state, "host"), Seats: o.Sessions, Password: pw,
		Services: svc, Binary: o.Binary, Lang: "en", Start: o.Lesson, MaxWorkers: 8, PendingPerAddress: max(64, o.Sessions)})
	if err != nil {
		return BenchResult{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return BenchResult{}, err
	}
	go srv.Serve(ln)
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(c)
	}()

	prefix := "bws" + strings.ToLower(rand.Text()[:4])
	if o.Room || o.Watch {
		rm, err := room.Open(ctx, svc.MySQL, svc.Config.MySQL, prefix, "bench")
		if err != nil {
			return BenchResult{}, err
		}
		defer func() {
			rm.Close()
			svc.MySQL.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS `"+room.DBName(prefix)+"`")
		}()
		srv.SetRoom(rm)
		if o.Watch {
			stop := make(chan struct{})
			defer close(stop)
			go benchMirror(ctx, rm, prefix+"0", stop)
		}
	}
	cpu0, t0 := cpuTicks(), time.Now()
	var mu sync.Mutex
	var lat []time.Duration
	unframed := 0
	peakWorkers := 0
	stopWatch := make(chan struct{})
	go func() { // the lessons' workers alive at once
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(200 * time.Millisecond):
			}
			n := countWorkers(prefix)
			mu.Lock()
			peakWorkers = max(peakWorkers, n)
			mu.Unlock()
		}
	}()
	// Whatever ends the run (a session that failed too), the sessions'
	// databases go: an aborted bench left a hundred behind.
	defer benchCleanup(context.WithoutCancel(ctx), srv, svc, prefix, o.Sessions)
	var wg sync.WaitGroup
	errs := make(chan error, o.Sessions)
	for i := range o.Sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, miss, err := benchWalk(ln.Addr().String(), fmt.Sprintf("%s%d", prefix, i), pw, o)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			lat, unframed = append(lat, l...), unframed+miss
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(stopWatch)
	close(errs)
	wall := time.Since(t0)
	cpu := cpuTicks() - cpu0
	for err := range errs {
		return BenchResult{}, err
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	res := BenchResult{Sessions: o.Sessions, Keys: len(lat), P50MS: ms(q(0.5)), P99MS: ms(q(0.99)), WallS: wall.Seconds(),
		CPUPct: float64(cpu) / 100 / wall.Seconds() * 100, RSSMB: peakRSSMB(), Workers: peakWorkers, Unframed: unframed, Namespace: prefix}
	if len(lat) > 0 {
		res.MaxMS = ms(lat[len(lat)-1])
	}
	return res, nil
}

// benchMirror is an instructor watching one participant: it renews the watch
// and reads the published frame twice a second, as the room screen does.
func benchMirror(ctx context.Context, rm *room.Room, name string, stop <-chan struct{}) {
	renew := time.Time{}
	for {
		select {
		case <-stop:
			return
		case <-time.After(500 * time.Millisecond):
		}
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		if time.Since(renew) > room.WatchFor/2 {
			rm.Send(c, room.Command{Kind: room.Watch, Target: name, Arg: time.Now().Add(room.WatchFor).UTC().Format(time.RFC3339)})
			renew = time.Now()
		}
		rm.Frame(c, name)
		cancel()
	}
}

// benchWalk is one participant: connect, wait for the screen, press enter (the
// next step, or the highlighted option of a menu) o.Keys times about o.Pace
// apart, and time each key to the first output after it.
func benchWalk(addr, user, pw string, o BenchOptions) ([]time.Duration, int, error) {
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: user, Auth: []gossh.AuthMethod{gossh.Password(pw)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", user, err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		return nil, 0, err
	}
	out := &frames{arrived: make(chan struct{}, 1)}
	s.Stdout, s.Stderr = out, out
	in, _ := s.StdinPipe()
	if err := s.RequestPty("xterm-256color", 40, 160, gossh.TerminalModes{}); err != nil {
		return nil, 0, err
	}
	if err := s.Shell(); err != nil {
		return nil, 0, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for !out.contains("reliable-messaging lab") {
		if time.Now().After(deadline) {
			return nil, 0, fmt.Errorf("%s: no screen within 30 s", user)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var lat []time.Duration
	miss := 0
	// People do not press keys in step: each session starts at its own
	// moment in the first pace, and each pause varies by up to ±25 %.
	time.Sleep(time.Duration(mrand.Int64N(int64(o.Pace))))
	for range o.Keys {
		time.Sleep(o.Pace*3/4 + time.Duration(mrand.Int64N(int64(o.Pace/2)+1)))
		out.drain()
		sent := time.Now()
		in.Write([]byte("\r"))
		select {
		case <-out.arrived:
			lat = append(lat, time.Since(sent))
		case <-time.After(2 * time.Second):
			miss++ // a key the screen drew nothing for (there is always a frame: a spinner, a status)
		}
	}
	in.Write([]byte("q"))
	done := make(chan struct{})
	go func() { s.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	return lat, miss, nil
}

// frames is a session's output: it signals each arrival.
type frames struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	arrived chan struct{}
}

func (f *frames) Write(b []byte) (int, error) {
	f.mu.Lock()
	f.buf.Write(b)
	if f.buf.Len() > 1<<20 {
		f.buf.Reset() // only the latest output matters
	}
	f.mu.Unlock()
	select {
	case f.arrived <- struct{}{}:
	default:
	}
	return len(b), nil
}

func (f *frames) contains(s string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Contains(f.buf.Bytes(), []byte(s))
}

// drain forgets an arrival signalled before the key is sent.
func (f *frames) drain() {
	select {
	case <-f.arrived:
	default:
	}
}

// cpuTicks is this process's and its reaped children's CPU time, in clock
// ticks (1/100 s).
func cpuTicks() int64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	var sum int64
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		n, _ := strconv.ParseInt(f[i], 10, 64)
		sum += n
	}
	return sum
}

func peakRSSMB() float64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// countWorkers counts live lesson workers of the bench's participants.
func countWorkers(prefix string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(env, []byte("LAB_NAMESPACE="+prefix)) {
			n++
		}
	}
	return n
}

// benchCleanup drops what the participants' lessons created (their databases)
// and the logins the server gave them.
func benchCleanup(ctx context.Context, srv *Server, svc *services.Services, prefix string, n int) {
	for i := range n {
		names := services.Names{NS: fmt.Sprintf("%s%d", prefix, i)}
		for _, db := range []string{services.IdempotencyDB, services.OutboxDB} {
			services.DropOwned(ctx, svc.MySQL, names.Name(db))
		}
		srv.Forget(ctx, names.NS)
	}
}
