package room_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// open opens a room named after the test's namespace (lab_room_NS), which
// the harness drops when the test ends.
func open(t *testing.T) *room.Room {
	t.Helper()
	env := labtest.Connect(t, labtest.MySQL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := room.Open(ctx, env.Svc.MySQL, env.Config().MySQL, env.NS, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// TestAPredictTallyCountsEveryParticipantsAnswer: the class's answers at a
// predict step, read from the participants' progress in the room.
func TestAPredictTallyCountsEveryParticipantsAnswer(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	for name, pick := range map[string]string{"ann": "yes", "ben": "no", "cat": "yes"} {
		snap := `{"lessons":{"broker-three-links":{"step":4,"predictions":{"confirm-means-processed":"` + pick + `"}}},` +
			`"activity":{"lesson":"broker-three-links","step":4,"steps":20,"passed":4}}`
		if err := r.Store(name).Save(ctx, []byte(snap)); err != nil {
			t.Fatal(err)
		}
	}
	tally, err := r.Tally(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := tally["broker-three-links"]["confirm-means-processed"]
	if got["yes"] != 2 || got["no"] != 1 {
		t.Fatalf("tally %v, want yes 2, no 1", got)
	}
	ps, err := r.Participants(ctx)
	if err != nil || len(ps) != 3 || ps[0].Step != 4 || ps[0].Steps != 20 {
		t.Fatalf("participants %+v, %v", ps, err)
	}
	// A participant's own progress comes back from the room, whole.
	f, err := r.Store("ben").Load(ctx)
	if err != nil || f.Lessons["broker-three-links"].Predictions["confirm-means-processed"] != "no" {
		t.Fatalf("ben's progress %+v, %v", f, err)
	}
}

// TestARoomRefusesADatabaseTheLabDidNotCreate: a same-named database
// without the lab's mark is left alone.
func TestARoomRefusesADatabaseTheLabDidNotCreate(t *testing.T) {
	ctx := context.Background()
	env := labtest.Connect(t, labtest.MySQL)
	server, dsn := env.Svc.MySQL, env.Config().MySQL
	if _, err := server.Exec("CREATE DATABASE " + room.DBName(env.NS)); err != nil {
		t.Fatal(err)
	}
	// The refusal, not any error: a failed lookup is no proof it refused.
	if _, err := room.Open(ctx, server, dsn, env.NS, "test"); err == nil || !strings.Contains(err.Error(), "was not created by the lab; nothing was touched") {
		t.Fatalf("opened a room in a database the lab did not create, or failed otherwise: %v", err)
	}
}

// TestAnUnknownRoomIsAnErrorNotANewEmptyRoom: a name no lab serve used is an error.
func TestAnUnknownRoomIsAnErrorNotANewEmptyRoom(t *testing.T) {
	ctx := context.Background()
	env := labtest.Connect(t, labtest.MySQL)
	server, dsn := env.Svc.MySQL, env.Config().MySQL
	if _, err := room.Existing(ctx, server, dsn, env.NS, "test"); err == nil || !strings.Contains(err.Error(), "there is no room") {
		t.Fatalf("opened a room nobody created, or failed otherwise: %v", err)
	}
	var n int
	if err := server.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", room.DBName(env.NS)).Scan(&n); err != nil {
		t.Fatal(err) // a failed count read as 0 would pass
	}
	if n != 0 {
		t.Error("asking for an unknown room created its database")
	}
}

// The room tells who is online (a fresh screen), failing (with the step and
// why), stuck (online, not done, 5 minutes on a step), done and offline,
// and lists those who need the instructor first; polls say how many of
// those who opened the lesson answered.
func TestPresenceFailingStuckDoneOfflineAndPolls(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	save := func(name, lesson string, done bool, failStep string, predict string) {
		t.Helper()
		d := "false"
		if done {
			d = "true"
		}
		pred := ""
		if predict != "" {
			pred = `,"predictions":{"confirm":"` + predict + `"}`
		}
		snap := `{"lessons":{"` + lesson + `":{"step":4,"done":` + d + pred + `}},` +
			`"activity":{"lesson":"` + lesson + `","step":4,"steps":20,"passed":4,"fail_step":"` + failStep + `","fail_why":"value is 0"}}`
		if err := r.Store(name).Save(ctx, []byte(snap)); err != nil {
			t.Fatal(err)
		}
	}
	save("ann", "l1", false, "[5/20] expect", "yes")
	save("ben", "l1", false, "", "no")
	save("cat", "l1", true, "", "")
	save("dan", "l1", false, "", "")
	save("eve", "l1", false, "", "")
	for _, n := range []string{"ann", "ben", "cat", "dan"} {
		if held, err := r.Claim(ctx, n, "server-x"); err != nil || held != "" {
			t.Fatalf("claim %s: %q %v", n, held, err)
		}
	}
	// ben has been on his step for 6 minutes.
	if _, err := r.DB.ExecContext(ctx, "UPDATE participant SET step_since = UTC_TIMESTAMP(6) - INTERVAL 6 MINUTE WHERE name='ben'"); err != nil {
		t.Fatal(err)
	}
	ps, err := r.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Name+":"+p.State())
	}
	if want := "ann:failing ben:stuck dan:online cat:done eve:offline"; strings.Join(got, " ") != want {
		t.Fatalf("room %s, want %s", strings.Join(got, " "), want)
	}
	if ps[0].FailStep != "[5/20] expect" || ps[0].FailWhy != "value is 0" {
		t.Errorf("ann's failing step: %+v", ps[0])
	}
	polls, err := r.Polls(ctx)
	if err != nil || len(polls) != 1 || polls[0].Answered != 2 || polls[0].Reached != 5 || polls[0].Answers["yes"] != 1 {
		t.Fatalf("polls %+v, %v: want 2 of 5 answered", polls, err)
	}
}

// A forged progress row (anyone holding the room's DSN could write one)
// reaches the instructor's polls as plain text: lesson, step and answer.
func TestPollsFromAForgedRowArePlainText(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	evil := "a\x1b]2;title\x07b\u009b2Jc\u202ed"
	snap, _ := json.Marshal(map[string]any{"lessons": map[string]any{"l" + evil: map[string]any{"step": 1,
		"predictions": map[string]string{"p" + evil: "yes" + evil}}}})
	if err := r.Store("mal").Save(ctx, snap); err != nil {
		t.Fatal(err)
	}
	polls, err := r.Polls(ctx)
	if err != nil || len(polls) != 1 {
		t.Fatalf("polls %+v, %v: want the forged row's one", polls, err)
	}
	texts := []string{polls[0].Lesson, polls[0].Name}
	for a := range polls[0].Answers {
		texts = append(texts, a)
	}
	for _, s := range texts {
		if s != plain.Line(s, 1024) || !strings.Contains(s, "ab") || !strings.Contains(s, "cd") {
			t.Errorf("a poll's text is %q: want it plain, the text around the escapes kept", s)
		}
	}
}

// A second claim of a screen another server holds names that server; the
// holder's renewals keep it; a release lets anyone claim it; reset holds
// it against everyone.
func TestAScreenIsHeldByOneServerOfTheRoom(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	if held, err := r.Claim(ctx, "zed", "a"); err != nil || held != "" {
		t.Fatalf("first claim: %q %v", held, err)
	}
	if held, _ := r.Claim(ctx, "zed", "b"); held != "a" {
		t.Fatalf("b's claim: held by %q, want a", held)
	}
	if ok, err := r.Renew(ctx, "zed", "a"); !ok || err != nil {
		t.Fatalf("a's renewal: %v %v", ok, err)
	}
	if ok, _ := r.Renew(ctx, "zed", "b"); ok {
		t.Fatal("b renewed a screen it does not hold")
	}
	r.Release(ctx, "zed", "a")
	if held, _ := r.Claim(ctx, "zed", room.Resetting); held != "" {
		t.Fatalf("reset's claim after the release: %q", held)
	}
	if held, _ := r.Claim(ctx, "zed", "b"); held != room.Resetting {
		t.Fatalf("a claim during a reset: held by %q", held)
	}
	// A holder whose beats stopped is taken over.
	if _, err := r.DB.ExecContext(ctx, "UPDATE screen SET beat = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE WHERE name='zed'"); err != nil {
		t.Fatal(err)
	}
	if held, _ := r.Claim(ctx, "zed", "b"); held != "" {
		t.Fatalf("a stale screen was not taken over: %q", held)
	}
}

// Plain leaves one line of text: no escape sequence, no control character,
// and a cut on a character boundary that MySQL accepts.
func TestPlainIsOneLineOfTextCutOnACharacter(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\": "link",
		"a\x1b[2Jb\x07c\u009b31md":                 "abc31md",
		"two\nlines\r\tand  spaces":                "two lines and spaces",
	} {
		if got := room.Plain(in, 255); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("消", 100) // 300 bytes
	got := room.Plain(long, 255)
	if len(got) != 255 || !utf8.ValidString(got) {
		t.Errorf("cut to %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	r := open(t)
	if err := r.Send(context.Background(), room.Command{Kind: room.Say, Arg: long + "x"}); err != nil {
		t.Errorf("a long Chinese line: %v", err)
	}
}

// The command grammar the room screen and lab room share.
func TestTheInstructorsCommandsParse(t *testing.T) {
	names := []string{"alice", "bob"}
	for line, want := range map[string]room.Command{
		"goto 13":               {Kind: room.Goto, Arg: "13"},
		"goto 14 alice":         {Kind: room.Goto, Arg: "14", Target: "alice"},
		"say five minutes left": {Kind: room.Say, Arg: "five minutes left"},
		"say alice well done":   {Kind: room.Say, Arg: "well done", Target: "alice"},
		"say alice":             {Kind: room.Say, Arg: "alice"},
		"end bob":               {Kind: room.End, Target: "bob"},
		"timer off":             {Kind: room.Timer, Arg: "off"},
	} {
		got, err := room.Parse(line, names)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", line, got, err, want)
		}
	}
	c, err := room.Parse("timer 10m", names)
	if left := time.Until(c.Until()); err != nil || left < 9*time.Minute || left > 10*time.Minute+time.Second {
		t.Errorf("timer 10m ends in %s (%v)", left, err)
	}
	for _, bad := range []string{"", "goto", "end", "timer soon", "timer -1m", "dance"} {
		if _, err := room.Parse(bad, names); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The JSON of a participant carries the state the room screen shows, so
// a debrief read from lab room --json says failing, stuck, done or offline
// as the screen did.
func TestAParticipantsJSONCarriesItsState(t *testing.T) {
	for _, c := range []struct {
		p    room.Participant
		want string
	}{
		{room.Participant{Name: "a", Online: true}, "online"},
		{room.Participant{Name: "b", Online: true, FailStep: "[3/9] expect"}, "failing"},
		{room.Participant{Name: "c", Online: true, Stuck: true}, "stuck"},
		{room.Participant{Name: "d", Online: true, Done: true}, "done"},
		{room.Participant{Name: "e"}, "offline"},
	} {
		b, err := json.Marshal(c.p)
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Name  string `json:"name"`
			State string `json:"state"`
		}
		if err := json.Unmarshal(b, &back); err != nil || back.Name != c.p.Name || back.State != c.want {
			t.Errorf("%s: %s, want state %q", c.p.Name, b, c.want)
		}
	}
}

// The log read by kind shows the refusals however many logins came after
// them, and a forged line reaches no terminal with its escapes.
func TestTheLogByKindShowsRefusalsPastAFloodAndNoEscapes(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	r.Audit(ctx, "refused mallory from 10.0.0.9: wrong password")
	for i := 0; i < 250; i++ {
		r.Audit(ctx, fmt.Sprintf("alice%d from 10.0.0.1 logged in with the password", i))
	}
	if _, err := r.DB.ExecContext(ctx, "INSERT INTO audit (at, server, line, kind) VALUES (UTC_TIMESTAMP(6), 'x\x1b]0;t\x07', 'refused \x1b[2Jforged\u009b', 'refusals')"); err != nil {
		t.Fatal(err)
	}
	all, err := r.Log(ctx, 200, "")
	if err != nil || len(all) != 200 || strings.Contains(fmt.Sprint(all), "mallory") {
		t.Fatalf("the newest 200 of every kind: %d lines (%v)", len(all), err)
	}
	ref, err := r.Log(ctx, 200, "refusals")
	if err != nil || len(ref) != 2 || !strings.Contains(ref[0].Line, "mallory") {
		t.Fatalf("the refusals: %+v (%v)", ref, err)
	}
	for _, e := range ref {
		if strings.ContainsAny(e.Line+e.Server, "\x1b\x07\u009b") {
			t.Errorf("a log line carries escapes: %q %q", e.Server, e.Line)
		}
	}
	if logins, _ := r.Log(ctx, 500, "logins"); len(logins) != 250 {
		t.Errorf("%d logins, want 250", len(logins))
	}
	if room.LogKind("everything").Valid() {
		t.Error("an unknown kind is valid")
	}
}

// Each kind of the log keeps its own newest lines: a flood of refusals
// (21000 refused sessions over one connection in 22 s pushed every login
// out) drops only older refusals, and says so.
func TestAFloodOfOneKindOfLogLineDropsNoLineOfAnother(t *testing.T) {
	defer room.SetMaxAudit(100)()
	r := open(t)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		r.Audit(ctx, fmt.Sprintf("alice%d from 10.0.0.1 logged in with the password", i))
	}
	r.Audit(ctx, "lab room: goto 3 to everyone")
	var id int64
	r.DB.QueryRowContext(ctx, "SELECT MAX(id) FROM audit").Scan(&id)
	for n := id; n < 1100; n++ {
		if err := r.Audit(ctx, fmt.Sprintf("refused mallory from 10.0.0.9: the room keeps only the verdicts its server grades (%d)", n)); err != nil {
			t.Fatal(err)
		}
	}
	if logins, err := r.Log(ctx, 500, "logins"); err != nil || len(logins) != 5 {
		t.Errorf("the flood of refusals left %d of 5 logins (%v)", len(logins), err)
	}
	if cmds, _ := r.Log(ctx, 500, "commands"); len(cmds) != 1 {
		t.Errorf("the flood of refusals left %d of 1 commands", len(cmds))
	}
	ref, _ := r.Log(ctx, 5000, "refusals")
	if len(ref) > 120 || len(ref) < 100 || !strings.Contains(fmt.Sprint(ref), "older refusals lines were dropped") {
		t.Errorf("the refusals kept %d lines, want their newest 100 and a line that says how many went", len(ref))
	}
}

// Each room's presented lesson runs in a namespace of its own, which no
// participant can take: two rooms on one MySQL presenting at once used to
// drop each other's databases.
func TestEachRoomPresentsInANamespaceOfItsOwnNoParticipantCanTake(t *testing.T) {
	a, b := room.PresenterNamespace("monday"), room.PresenterNamespace("tuesday")
	if a == b || !regexp.MustCompile(`^[a-z0-9_]{1,16}$`).MatchString(a) {
		t.Fatalf("presenter namespaces %q and %q", a, b)
	}
	if p := services.NamespaceProblem(a); p == "" {
		t.Errorf("a participant could take %q", a)
	}
}

// A participant's screen and a verdict given through the workshop's door
// both write their progress: a save keeps a challenge the row holds newer
// than the snapshot's. The screen's next save used to erase the verdict.
func TestASaveKeepsAChallengeTheRowHoldsNewer(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	st := r.Store("alice")
	door := progress.New()
	door.Keep(progress.Verdict{Challenge: "once", Seed: 1, Passed: true, Line: "seed 1"}, time.Now())
	b, _ := json.Marshal(door)
	if err := st.Save(ctx, b); err != nil {
		t.Fatal(err)
	}
	screen := progress.New() // loaded before the verdict came: no challenge
	screen.Activity.Lesson = "idem-first-processing"
	b, _ = json.Marshal(screen)
	if err := st.Save(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(ctx)
	if err != nil || got.Challenges["once"] == nil || !got.Challenges["once"].Passed || got.Activity.Lesson != "idem-first-processing" {
		t.Fatalf("after the screen's save: %+v (%v)", got, err)
	}
	// A newer state of the challenge wins over the row's.
	later := progress.New()
	later.Challenges = map[string]*progress.Challenge{"once": {Runs: 5, Updated: time.Now().Add(time.Minute)}}
	b, _ = json.Marshal(later)
	st.Save(ctx, b)
	if got, _ := st.Load(ctx); got.Challenges["once"].Runs != 5 {
		t.Errorf("a newer challenge state lost to the row's: %+v", got.Challenges["once"])
	}
}

// A frame anyone wrote into the room's table reaches the instructor's
// mirror and the participants' presentation with its lines and colours
// only.
func TestAFrameReadBackCarriesColoursAndLinesOnly(t *testing.T) {
	ctx := context.Background()
	rm := testRoom(t)
	forged := "\x1b[1mthe instructor is presenting\x1b[m\n\x1b[2J\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \x1b]52;c;eA==\x07\u009b6n here"
	if _, err := rm.DB.ExecContext(ctx, "INSERT INTO frame VALUES (?, ?, 80, 24, NOW(6))", room.Presenter, forged); err != nil {
		t.Fatal(err)
	}
	f, ok, err := rm.Frame(ctx, room.Presenter)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if want := "\x1b[1mthe instructor is presenting\x1b[m\nclick 6n here"; f.Content != want {
		t.Fatalf("frame %q, want %q", f.Content, want)
	}
}

// A command row written by hand with an id at BIGINT's end would use up
// the ids (every later send failing) and move every server past all later
// commands: the room never carries it out, removes it when a send needs
// the ids, and says so in its log.
func TestACommandIdAtTheEndOfTheRangeBlocksNothing(t *testing.T) {
	ctx := context.Background()
	rm := testRoom(t)
	if err := rm.Send(ctx, room.Command{Kind: room.Say, Arg: "first"}); err != nil {
		t.Fatal(err)
	}
	last, err := rm.LastCommand(ctx)
	if err != nil || last == 0 {
		t.Fatal(last, err)
	}
	if _, err := rm.DB.ExecContext(ctx, "INSERT INTO command VALUES (9223372036854775807, '', 'goto', '99', UTC_TIMESTAMP(6))"); err != nil {
		t.Fatal(err)
	}
	if l, _ := rm.LastCommand(ctx); l != last {
		t.Errorf("the forged id moved a starting server's place to %d (was %d)", l, last)
	}
	if err := rm.Send(ctx, room.Command{Kind: room.Say, Arg: "after"}); err != nil {
		t.Fatalf("a send after the forged id: %v", err)
	}
	cmds, err := rm.Commands(ctx, last)
	if err != nil || len(cmds) != 1 || cmds[0].Arg != "after" {
		t.Fatalf("commands after %d: %+v (%v), want only the one sent after", last, cmds, err)
	}
	log, _ := rm.Log(ctx, 10, room.LogKind("refusals"))
	var said bool
	for _, e := range log {
		said = said || strings.Contains(e.Line, "2^62")
	}
	if !said {
		t.Errorf("the room's log says nothing of the forged command: %+v", log)
	}
}

// testRoom is a room of the test's own namespace, closed when it ends.
func testRoom(t *testing.T) *room.Room {
	t.Helper()
	env := labtest.Connect(t, labtest.MySQL)
	rm, err := room.Open(context.Background(), env.Svc.MySQL, env.Svc.Config.MySQL, env.NS, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rm.Close)
	return rm
}

// The debrief is a record: a goto or a reset changes what a participant
// is doing, never what they did. Alice fails twice, answers a poll; the
// room sends her elsewhere and resets her: her two failures, the first
// failed step of her attempt (the root cause, not the last one) and her
// answer stay. Bob has the lesson open without having saved progress in
// it: the poll counts him as reached.
func TestTheRecordKeepsWhatAGotoOrAResetWouldRewrite(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	save := func(name, snap string) {
		t.Helper()
		if err := r.Store(name).Save(ctx, []byte(snap)); err != nil {
			t.Fatal(err)
		}
	}
	const l = "broker-three-links"
	save("alice", `{"lessons":{"`+l+`":{"step":3}},"activity":{"lesson":"`+l+`","step":3,"steps":20,"failed":1,"fail_step":"[3/20] expect","fail_why":"want 1 row, got 0"}}`)
	save("alice", `{"lessons":{"`+l+`":{"step":5,"predictions":{"confirm-means-processed":"yes"}}},"activity":{"lesson":"`+l+`","step":5,"steps":20,"failed":2,"fail_step":"[5/20] expect","fail_why":"want 2, got 1"}}`)
	save("bob", `{"activity":{"lesson":"`+l+`","step":1,"steps":20}}`)
	find := func(name string) room.Participant {
		t.Helper()
		ps, err := r.Participants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Name == name {
				return p
			}
		}
		t.Fatalf("no %s in the room", name)
		return room.Participant{}
	}
	if a := find("alice"); a.FailedAll != 2 || a.FirstFailStep != "[3/20] expect" || a.FailStep != "[5/20] expect" {
		t.Errorf("alice before the goto: %d failures, first failed %q, last %q; want 2, [3/20], [5/20]", a.FailedAll, a.FirstFailStep, a.FailStep)
	}
	poll := func() room.Poll {
		t.Helper()
		polls, err := r.Polls(ctx)
		if err != nil || len(polls) != 1 {
			t.Fatalf("polls %+v (%v)", polls, err)
		}
		return polls[0]
	}
	if p := poll(); p.Answered != 1 || p.Reached != 2 || p.Answers["yes"] != 1 {
		t.Errorf("the poll before: answered %d of %d (%v), want 1 of 2: bob has the lesson open", p.Answered, p.Reached, p.Answers)
	}
	if err := r.Send(ctx, room.Command{Kind: room.Goto, Arg: "idem-first-processing"}); err != nil {
		t.Fatal(err)
	}
	save("alice", `{"lessons":{"`+l+`":{"step":5,"predictions":{"confirm-means-processed":"yes"}}},"activity":{"lesson":"idem-first-processing","step":0,"steps":30}}`)
	if a := find("alice"); a.FailedAll != 2 || a.Failed != 0 || a.FirstFailStep != "" {
		t.Errorf("alice after the goto: %d failures in all (want 2), %d in this lesson (want 0), first failed %q (want none in this attempt)", a.FailedAll, a.Failed, a.FirstFailStep)
	}
	if err := r.Reset(ctx, "alice", func(context.Context, string) {}); err != nil {
		t.Fatal(err)
	}
	if p := poll(); p.Answered != 1 || p.Answers["yes"] != 1 {
		t.Errorf("the poll after alice's reset: answered %d (%v), want her answer kept", p.Answered, p.Answers)
	}
	evs, err := r.Events(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	if got := strings.Join(kinds, " "); got != "fail fail predict goto reset" {
		t.Errorf("the record: %s, want fail fail predict goto reset", got)
	}
}

// A participant sent back to a lesson they finished reads as done with
// every step run, not "done 0/40".
func TestALessonDoneReadsAsEveryStepRunAfterAGoto(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	if err := r.Store("dora").Save(ctx, []byte(`{"lessons":{"broker-three-links":{"step":40,"done":true}},"activity":{"lesson":"broker-three-links","step":0,"steps":40}}`)); err != nil {
		t.Fatal(err)
	}
	ps, err := r.Participants(ctx)
	if err != nil || len(ps) != 1 {
		t.Fatalf("participants %+v (%v)", ps, err)
	}
	if p := ps[0]; !p.Done || p.Step != 40 || p.Steps != 40 {
		t.Errorf("dora, back on a lesson she finished: done %v %d/%d, want done 40/40", p.Done, p.Step, p.Steps)
	}
}

// One participant's saves reach the room at most SavesPerSecond: thirty
// saves at once take about three seconds (a lower bound: a busy machine
// only adds to it), and the last snapshot is the one kept.
func TestOneParticipantsSavesAreBoundedPerSecond(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	snap := func(step int) []byte {
		return []byte(fmt.Sprintf(`{"activity":{"lesson":"broker-three-links","step":%d,"steps":40}}`, step))
	}
	began := time.Now()
	for i := 1; i <= 30; i++ {
		if err := r.Store("eve").Save(ctx, snap(i)); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(began); took < 2500*time.Millisecond {
		t.Errorf("30 saves of one participant took %s, want about 3 s (at most %d a second)", took, room.SavesPerSecond)
	}
	ps, _ := r.Participants(ctx)
	for _, p := range ps {
		if p.Name == "eve" && p.Step != 30 {
			t.Errorf("eve's row holds step %d, want her last save's 30", p.Step)
		}
	}
}

// Verdicts written at once, each from a snapshot that had not seen the
// others (a screen's save beside the server's grading, on two servers of
// the room), all stay: 40 challenges' verdicts from four servers at once,
// the first saves of a participant the room has no row for yet racing,
// leave 40 (500 sent four at a time once left 221).
func TestVerdictsWrittenAtOnceAreAllKept(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL)
	ctx := context.Background()
	// Four servers of one room: each its own handle, pool and save rate.
	var servers []*room.Room
	for i := 0; i < 4; i++ {
		r, err := room.Open(ctx, env.Svc.MySQL, env.Config().MySQL, env.NS, fmt.Sprintf("server-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		servers = append(servers, r)
	}
	first := servers[0]
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	start := make(chan struct{})
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f := progress.New()
			f.Keep(progress.Verdict{Challenge: fmt.Sprintf("c%02d", i), Passed: true, Seed: 1, Line: "passed"}, time.Now())
			b, _ := json.Marshal(f)
			errs <- servers[i%4].Store("gus").Save(ctx, b)
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := first.Store("gus").Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Challenges) != 40 {
		t.Errorf("%d of 40 verdicts kept", len(f.Challenges))
	}
}
