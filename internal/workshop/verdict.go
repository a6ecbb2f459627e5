package workshop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"charm.land/ssh"
	"charm.land/wish/v2"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/challenge"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/services"
)

// challengeResult is the one command the SSH door serves: a participant's
// challenge verdict, from `lab challenge run --workshop NAME@HOST` on their
// own machine, kept in the room under the name their session logged in
// with. A participant thus holds no credential of the room: they write
// their own verdict and nothing else.
const challengeResult = "challenge-result"

// maxVerdict bounds what one verdict may be.
const maxVerdict = 4096

// keepVerdict reads a verdict (progress.Verdict as JSON) from the session
// and keeps it in the room's progress of the session's user.
func (s *Server) keepVerdict(sess ssh.Session, who string, refuse func(string)) {
	user := sess.User()
	if p := services.NamespaceProblem(user); p != "" {
		refuse(fmt.Sprintf("%q cannot be a participant's name: %s", safeName(user), p))
		return
	}
	rm := s.room()
	if rm == nil {
		refuse("this workshop keeps no room (lab serve --room NAME): there is nowhere to keep a verdict")
		return
	}
	b, err := io.ReadAll(io.LimitReader(sess, maxVerdict+1))
	if err != nil || len(b) > maxVerdict {
		refuse(fmt.Sprintf("a verdict is one JSON object of at most %d bytes", maxVerdict))
		return
	}
	var v progress.Verdict
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		refuse("not a verdict (lab challenge run --workshop sends one): " + plain.Line(err.Error(), 200))
		return
	}
	all, _ := challenge.All("en")
	if !slices.ContainsFunc(all, func(c *lab.Challenge) bool { return c.Name == v.Challenge }) || v.Seed == 0 {
		refuse(fmt.Sprintf("no challenge %q (or no seed) in the verdict", plain.Line(v.Challenge, 32)))
		return
	}
	v.Line = plain.Line(v.Line, 200)
	ctx, cancel := context.WithTimeout(sess.Context(), 10*time.Second)
	defer cancel()
	store := rm.Store(user)
	p, err := store.Load(ctx)
	if err == nil {
		p.Keep(v, time.Now())
		var snap []byte
		if snap, err = json.Marshal(p); err == nil {
			err = store.Save(ctx, snap)
		}
	}
	if err != nil {
		refuse("the room's database did not take the verdict; try again in a moment")
		return
	}
	verdict := "not passed"
	if v.Passed {
		verdict = "passed"
	}
	s.logf("%s sent a challenge verdict from their own machine: %s %s under seed %d", who, v.Challenge, verdict, v.Seed)
	wish.Printf(sess, "lab: kept in room %s: %s %s under seed %d, as %s\n", rm.Name, v.Challenge, verdict, v.Seed, user)
	sess.Exit(0)
}
