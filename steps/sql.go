package steps

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	lab "github.com/rmlab/lab"
	labsql "github.com/rmlab/lab/sql"
)

// sqlKind runs statements on a named session.
//
//	```sql session=A db=blog_idempotency_lab [file=idempotency/x.sql] [error=1062 [on-error=continue]] [blocks] [timeout=10s]
//	START TRANSACTION;
//	INSERT ...;
//	```
//
// Statements run one by one and stop at the first error, as the mysql
// client does with a script. An error fails the step unless error=CODE
// names it. With on-error=continue the session is a client that carries on
// after that error (a program that logs it and sends the next statement,
// mysql --force): the statements after it run in the same transaction. With blocks, the last statement is
// expected to wait on a lock: after grace (default 1s) the step returns with
// it still blocked inside the server, and a later await step collects it.
type sqlKind struct{}

func (sqlKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "session", "db", "file", "error", "on-error", "blocks", "timeout", "grace"); err != nil {
		return err
	}
	switch v, ok := s.Attrs["on-error"]; {
	case ok && v != "continue" && v != "stop":
		return errors.New(sayOnErrorValue.F(s.Where(), v))
	case v == "continue" && s.Attrs["error"] == "":
		return errors.New(sayOnErrorNeedsCode.F(s.Where()))
	}
	if err := checkDB(s, s.Attrs["db"]); err != nil {
		return err
	}
	if f := s.Attrs["file"]; f != "" {
		if _, err := labsql.File(f); err != nil {
			return fmt.Errorf("%s: %v", s.Where(), err)
		}
		if strings.TrimSpace(s.Body) != "" {
			return fmt.Errorf("%s: sql step has both file=%s and a body; use one", s.Where(), f)
		}
	} else if len(labsql.Split(s.Body)) == 0 {
		return fmt.Errorf("%s: sql step has no statement", s.Where())
	}
	for _, k := range []string{"timeout", "grace"} {
		if _, err := attrDuration(s, k, 0); err != nil {
			return err
		}
	}
	return nil
}

// checkDB rejects a database name the lab does not know ("" is fine: the
// lesson's first table view's database).
func checkDB(s *lab.Step, db string) error {
	if db == "" || slices.Contains(labsql.Databases(), db) {
		return nil
	}
	return fmt.Errorf("%s: %s step db=%s is not one of the article's databases%s; use %s", s.Where(), s.Kind, db,
		Suggest(db, labsql.Databases()), strings.Join(labsql.Databases(), " or "))
}

// Statements returns what a sql step sends, namespace applied, in order.
func (r *Run) Statements(s *lab.Step) ([]string, error) {
	text := s.Body
	if f := s.Attrs["file"]; f != "" {
		t, err := labsql.File(f)
		if err != nil {
			return nil, err
		}
		text = r.Expand(t)
	}
	stmts := labsql.Split(text)
	for i := range stmts {
		stmts[i] = r.Env.Svc.Names.SQL(stmts[i])
	}
	return stmts, nil
}

// dbOf is the namespaced database a step names, or the lesson's default.
func (r *Run) dbOf(s *lab.Step) string {
	db := s.Attr("db", "")
	if db == "" && r.Lesson != nil && len(r.Lesson.Tables) > 0 {
		db = r.Lesson.Tables[0].DB
	}
	return r.Env.Svc.Names.Name(db)
}

func (sqlKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	timeout, _ := attrDuration(s, "timeout", 15*time.Second)
	grace, _ := attrDuration(s, "grace", time.Second)
	_, blocks := s.Attrs["blocks"]
	name := s.Attr("session", "main")
	stmts, err := r.Statements(s)
	if err != nil {
		return fail("%v", err)
	}
	sess, err := r.Session(ctx, name, r.dbOf(s))
	if err != nil {
		return fail("%v", err)
	}
	res := lab.Result{Passed: true}
	var obs []string
	if sess.Waiting() {
		return fail("session %s is still waiting on an earlier statement; add an await step for it first", name)
	}
	carryOn := s.Attrs["on-error"] == "continue"
	erred := false // the named error came, and the client carried on
	for i, st := range stmts {
		res.Sent = append(res.Sent, st)
		r.settleTrxCache(ctx, st)
		sess.Start(st)
		wait := timeout
		if blocks && i == len(stmts)-1 {
			wait = grace
		}
		o := sess.Await(wait)
		r.touchSQL()
		r.setOutcome(o)
		obs = append(obs, fmt.Sprintf("%s> %s;\n%s", name, st, o.Text()))
		if o.Pending {
			if !blocks {
				res.Passed = false
				res.Why = sayStmtWaiting.F(wait)
			}
			break
		}
		if o.ErrCode != "" {
			want := s.Attrs["error"]
			if want != o.ErrCode {
				res.Passed = false
				res.Why = sayUnexpected.F(o.ErrText)
				if want != "" {
					res.Why = sayWantedErrGot.F(want, o.ErrText)
				}
			}
			if carryOn && res.Passed && i < len(stmts)-1 {
				erred = true
				continue
			}
			break
		}
		if i == len(stmts)-1 {
			if want := s.Attrs["error"]; want != "" && !erred {
				res.Passed = false
				res.Why = sayWantedErrNone.F(want)
			}
			if blocks {
				res.Passed = false
				res.Why = "the statement was expected to wait on a lock, but finished at once"
			}
		}
	}
	res.Observed = strings.Join(obs, "\n")
	return res
}

// awaitKind collects a statement left blocked by a `blocks` sql step, or
// several at once (sessions=B,C): two waiters on one key that a rollback
// lets go at the same moment, one of which InnoDB picks to roll back
// (1213), whichever it is.
//
//	```await session=B [timeout=10s] [error=1062]
//	```
//	```await sessions=B,C error=1213
//	```
//
// With several sessions the outcome is a table (session, result, waited),
// and error=CODE is the error any of them may end with: the step fails on
// another error, or one still waiting.
type awaitKind struct{}

func (awaitKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "session", "sessions", "timeout", "error"); err != nil {
		return err
	}
	if s.Attrs["session"] != "" && s.Attrs["sessions"] != "" {
		return fmt.Errorf("%s: await takes session=NAME or sessions=A,B, not both", s.Where())
	}
	if v, ok := s.Attrs["sessions"]; ok {
		names := SplitList(v)
		if len(names) < 2 {
			return fmt.Errorf("%s: await sessions=%s: name two or more (one is session=NAME)", s.Where(), v)
		}
		for i, n := range names {
			if slices.Contains(names[:i], n) {
				return fmt.Errorf("%s: await sessions=%s names %s twice: name each session once", s.Where(), v, n)
			}
		}
	}
	_, err := attrDuration(s, "timeout", 0)
	return err
}

func (awaitKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	timeout, _ := attrDuration(s, "timeout", 15*time.Second)
	if names := SplitList(s.Attrs["sessions"]); len(names) > 1 {
		return awaitAll(r, s, names, timeout)
	}
	name := s.Attr("session", "main")
	r.mu.Lock()
	sess := r.sessions[name]
	r.mu.Unlock()
	if sess == nil || sess.current() == nil {
		return fail("session %s has no statement waiting", name)
	}
	o := sess.Await(timeout)
	r.touchSQL()
	r.setOutcome(o)
	res := lab.Result{Passed: true, Observed: "[" + name + "] " + o.Text() + "\n" + sayAwaitAllLine.F(name, o.Elapsed.Round(time.Millisecond))}
	if o.Pending {
		res.Passed = false
		res.Why = "still waiting after " + timeout.String()
	} else if o.ErrCode != "" && o.ErrCode != s.Attrs["error"] {
		res.Passed = false
		res.Why = sayUnexpected.F(o.ErrText)
	} else if o.ErrCode == "" && s.Attrs["error"] != "" {
		res.Passed = false
		res.Why = sayWantedErrStmt.F(s.Attrs["error"])
	}
	return res
}

// awaitAll collects several sessions' blocked statements, side by side.
func awaitAll(r *Run, s *lab.Step, names []string, timeout time.Duration) lab.Result {
	sess := make([]*Session, len(names))
	r.mu.Lock()
	for i, n := range names {
		sess[i] = r.sessions[n]
	}
	r.mu.Unlock()
	for i, n := range names {
		if sess[i] == nil || sess[i].current() == nil {
			return fail("session %s has no statement waiting", n)
		}
	}
	outs := make([]*Outcome, len(names))
	var wg sync.WaitGroup
	for i := range names {
		wg.Add(1)
		go func() { defer wg.Done(); outs[i] = sess[i].Await(timeout) }()
	}
	wg.Wait()
	r.touchSQL()
	res := lab.Result{Passed: true}
	o := &Outcome{Source: "await " + strings.Join(names, ","), Columns: []string{"session", "result", "waited"}}
	var obs []string
	for i, n := range names {
		out := outs[i]
		result := "ok"
		switch {
		case out.Pending:
			result = "still waiting"
		case out.ErrCode != "":
			result = out.ErrText
		}
		o.Rows = append(o.Rows, []string{n, result, out.Elapsed.Round(time.Millisecond).String()})
		obs = append(obs, sayAwaitOne.F(n, out.Text(), out.Elapsed.Round(time.Millisecond)))
		switch {
		case !res.Passed:
		case out.Pending:
			res.Passed, res.Why = false, saySessWaiting.F(n, timeout)
		case out.ErrCode != "" && out.ErrCode != s.Attrs["error"]:
			res.Passed, res.Why = false, saySessUnexpected.F(n, out.ErrText)
		}
		o.Elapsed = max(o.Elapsed, out.Elapsed)
	}
	r.setOutcome(o)
	res.Observed = strings.Join(obs, "\n")
	return res
}

// trxCacheRe matches the information_schema tables InnoDB serves from a
// cache it refreshes only when the cache is older than 0.1 s.
var trxCacheRe = regexp.MustCompile(`(?i)information_schema\.innodb_(trx|locks|lock_waits)\b`)

// settleTrxCache waits, before a statement that reads InnoDB's transaction
// tables, until 110 ms have passed since the run's last statement or step
// ended (a worker's commit before a wait returned counts too; lesson 30's
// relay claim showed as open once, on 4.x with two replays side by side): a
// cache filled before that statement (by any session on the server, another
// learner's included) is then old enough to be refreshed by this read, so
// the read sees the transaction the lesson just began. Without it, two
// replays side by side saw lesson 1's open transaction missing on MySQL 9.7.
func (r *Run) settleTrxCache(ctx context.Context, stmt string) {
	r.mu.Lock()
	last := r.lastSQL
	r.mu.Unlock()
	if d := trxCacheWait(stmt, last, time.Now()); d > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
}

// trxCacheWait is how long stmt must wait at now, the run's last statement
// having ended at last.
func trxCacheWait(stmt string, last, now time.Time) time.Duration {
	if !trxCacheRe.MatchString(stmt) {
		return 0
	}
	return max(0, last.Add(110*time.Millisecond).Sub(now))
}

func (r *Run) touchSQL() {
	r.mu.Lock()
	r.lastSQL = time.Now()
	r.mu.Unlock()
}
