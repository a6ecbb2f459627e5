package workshop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
)

// A participant's lessons run under logins of their own, not the lab's:
// a MySQL user granted their two databases only, and a RabbitMQ vhost of
// their own with a user allowed in it only. The servers' access control,
// not the lab's care, keeps one participant's workers out of another's
// data and out of the room's tables. Each session gives the logins new
// passwords; what a participant's workers hold dies with the session.

// PerParticipantConnections bounds one participant's MySQL connections,
// their screen's and their workers' together (the user's
// MAX_USER_CONNECTIONS): the busiest lesson holds 6 (lab doctor's perLab
// counts 8), so a participant's session can never take the server's.
const PerParticipantConnections = 24

// ParticipantVhostLimits bound a participant's vhost: the busiest lesson
// holds a dozen connections (lesson 19's workers, the screen's reader) and
// declares fewer than ten queues, so a runaway loop of theirs stops at the
// broker's limit, not at the class's broker.
var ParticipantVhostLimits = broker.Limits{MaxConnections: 64, MaxQueues: 64}

// Logins says whether a server gives participants logins of their own,
// and why not where it cannot (decided once, at start).
type Logins struct {
	mysql  bool
	redis  bool // Redis ACL users (Redis 6+)
	broker broker.Users
	why    []string // what is shared, and why

	mu   sync.Mutex
	made map[string]bool // the namespaces this server made logins for
}

// ProbeLogins finds out whether the lab's logins may make participants'
// own: a user of a namespace no participant can have (upper case), made
// and dropped, its name this probe's own (servers start side by side).
func ProbeLogins(ctx context.Context, svc *services.Services) *Logins {
	l := &Logins{}
	if svc == nil || svc.MySQL == nil {
		return l
	}
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	probe := "Probe" + services.Password()[:8]
	if _, err := services.MakeParticipantUser(c, svc.MySQL, svc.Config.MySQL, probe, 1); err != nil {
		l.why = append(l.why, "MySQL: participants' lessons use the lab's own login ("+err.Error()+"); give it CREATE USER and GRANT OPTION (GRANT ALL ON *.* TO it WITH GRANT OPTION) so each has a user of their own")
	} else {
		l.mysql = true
	}
	if host, err := services.ClientHost(c, svc.MySQL); err == nil {
		svc.MySQL.ExecContext(c, fmt.Sprintf("DROP USER IF EXISTS '%s'@'%s'", services.ParticipantUser(probe), host))
	}
	users, why := broker.UsersFor(c, svc.Config.AMQP, svc.Config)
	if users == nil {
		l.why = append(l.why, "RabbitMQ: participants' lessons use the lab's own login in one vhost ("+why+"); enable the management plugin with an administrator login, or --broker-control rabbitmqctl on the broker's machine, so each has a vhost of their own")
	} else {
		l.broker = users
	}
	if svc.Redis != nil {
		if err := services.RedisUsersAllowed(c, svc.Redis); err != nil {
			l.why = append(l.why, "Redis: participants' workers share one Redis login, every key of every participant theirs to read and delete ("+err.Error()+"); give the lab's login ACL (Redis 6 or later, the default user has it) so each has a user of their own")
		} else {
			l.redis = true
		}
	}
	return l
}

// Shared is what participants share with the lab's own logins, and why
// (nothing when each has their own).
func (l *Logins) Shared() []string { return l.why }

// Describe is the server's start-up line about participants' logins.
func (l *Logins) Describe() []string {
	var out []string
	if l.mysql {
		out = append(out, "each participant's lessons run as a MySQL user of their own (rmlab_NAME_p), granted their own databases only")
	}
	if l.broker != nil {
		out = append(out, "each participant's lessons run in a RabbitMQ vhost of their own (rmlab_NAME), made through "+l.broker.Via())
	}
	if l.redis {
		out = append(out, "each participant's workers use a Redis user of their own (rmlab_NAME_p), allowed their own keys and the lessons' commands only")
	}
	for _, w := range l.why {
		out = append(out, "WARNING "+w)
	}
	return out
}

// Own gives namespace ns's participant logins of their own on svc's
// servers and returns svc under them, with a function that closes what it
// opened. Where the server cannot (Describe says why), svc is returned as
// it is.
func (l *Logins) Own(ctx context.Context, svc *services.Services, ns string) (*services.Services, func(), error) {
	if !l.mysql && l.broker == nil && !l.redis {
		return svc, func() {}, nil
	}
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	l.mu.Lock()
	if l.made == nil {
		l.made = map[string]bool{}
	}
	l.made[ns] = true // before they are made: a half-made pair is removed too
	l.mu.Unlock()
	out := svc
	closeDB := func() {}
	if l.mysql {
		dsn, err := services.MakeParticipantUser(c, svc.MySQL, svc.Config.MySQL, ns, PerParticipantConnections)
		if err != nil {
			return nil, nil, fmt.Errorf("your MySQL user: %w", err)
		}
		twin, err := svc.WithMySQL(c, dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("connect as your MySQL user: %w", err)
		}
		twin.MySQL.SetMaxOpenConns(PerParticipantConnections / 2) // the rest for the workers
		twin.Info.Started, twin.Info.Swept = nil, nil
		twin.Watch = &services.Watch{DB: svc.MySQL, User: services.ParticipantUser(ns)}
		twin.Config.Binlog = svc.Config.BinlogDSN()
		out, closeDB = twin, func() { twin.MySQL.Close() }
	}
	if l.broker != nil {
		u, err := participantBroker(c, l.broker, svc.Config.AMQP, ns)
		if err != nil {
			closeDB()
			return nil, nil, err
		}
		if out == svc {
			cp := *svc
			out = &cp
		}
		out.Config.AMQP = u
	}
	closeAll := closeDB
	if l.redis && svc.Redis != nil {
		addr, err := services.MakeRedisUser(c, svc.Redis, svc.Config.Redis, ns)
		if err != nil {
			closeDB()
			return nil, nil, fmt.Errorf("your Redis user: %w", err)
		}
		if out == svc {
			cp := *svc
			out = &cp
		}
		rc := redis.NewClient(services.RedisOptions(addr))
		out.Config.Redis, out.Redis, out.RedisAdmin = addr, rc, svc.Redis
		closeAll = func() { rc.Close(); closeDB() }
	}
	return out, closeAll, nil
}

// participantBroker makes ns's vhost and user (a new password each time)
// and returns the AMQP URL that logs in as it.
func participantBroker(ctx context.Context, users broker.Users, amqpURL, ns string) (string, error) {
	vhost, name, pass := services.ParticipantVhost(ns), services.ParticipantUser(ns), services.Password()
	// "management": the lab reads the participant's queues through the
	// API as them, in their vhost only.
	if err := users.AddLogin(ctx, vhost, name, pass, "management", broker.Permissions{Configure: ".*", Write: ".*", Read: ".*"}, ParticipantVhostLimits); err != nil {
		return "", fmt.Errorf("your RabbitMQ vhost %s and user %s: %w", vhost, name, err)
	}
	u, err := url.Parse(amqpURL)
	if err != nil {
		return "", errors.New("the AMQP URL cannot be read")
	}
	u.User = url.UserPassword(name, pass)
	u.Path, u.RawPath = "/"+vhost, "/"+url.PathEscape(vhost)
	// An import lands a moment after rabbitmqctl returns: the login is
	// ready when it logs in.
	for {
		conn, err := services.DialAMQP(ctx, u.String())
		if err == nil {
			conn.Close()
			return u.String(), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("your RabbitMQ user %s was made but cannot log in to %s: %w", name, vhost, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Forget removes ns's logins: its MySQL user, RabbitMQ user and vhost (with
// everything in it).
func (l *Logins) Forget(ctx context.Context, svc *services.Services, ns string) error {
	var errs []error
	if l.mysql {
		host, err := services.ClientHost(ctx, svc.MySQL)
		if err == nil {
			_, err = svc.MySQL.ExecContext(ctx, fmt.Sprintf("DROP USER IF EXISTS '%s'@'%s'", services.ParticipantUser(ns), host))
		}
		errs = append(errs, err)
	}
	if l.broker != nil {
		_, err := l.broker.DeleteVhost(ctx, services.ParticipantVhost(ns))
		errs = append(errs, err, l.broker.Delete(ctx, services.ParticipantUser(ns)))
	}
	if l.redis && svc.Redis != nil {
		errs = append(errs, services.DropRedisUser(ctx, svc.Redis, ns))
	}
	return errors.Join(errs...)
}

// Forget removes participant ns's logins (Logins.Forget): a bench's
// sessions, whose namespaces nobody will use again.
func (s *Server) Forget(ctx context.Context, ns string) error {
	return s.logins.Forget(ctx, s.cfg.Services, ns)
}

// participantServices are the services participant name's lessons use:
// their own logins (Logins.Own), and no broker control: --broker-control
// lets the lab restart the broker it was given, and a participant's lesson
// must never restart the one the class shares.
func (s *Server) participantServices(ctx context.Context, name string) (*services.Services, func(), error) {
	// A name is the room's to give only where nobody else's databases are:
	// checked before its login is granted them.
	owner := s.owner()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := services.Claim(c, s.cfg.Services.MySQL, name, owner)
	cancel()
	if err != nil {
		return nil, nil, err
	}
	svc, done, err := s.logins.Own(ctx, s.cfg.Services.For(name), name)
	if err != nil {
		return nil, nil, err
	}
	svc.Config.Owner = owner
	svc.Info.BrokerControl, svc.Config.BrokerControl = false, ""
	return svc, done, nil
}

// owner is who this server makes its participants' databases for: its
// room, or the workshop of no room.
func (s *Server) owner() string {
	if rm := s.room(); rm != nil {
		return "room " + rm.Name
	}
	return "workshop"
}

// Made is every namespace this server made logins for, sorted.
func (l *Logins) Made() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for ns := range l.made {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// Shared is what this server's participants would share with the lab's own
// logins, and why (nothing when each has their own).
func (s *Server) Shared() []string { return s.logins.Shared() }

// Made is every namespace this server made participants' logins for.
func (s *Server) Made() []string { return s.logins.Made() }

// ForgetMade removes every login this server made (lab serve stopping:
// a participant's MySQL user, vhost and broker user outlive no class),
// and says which it could not.
func (s *Server) ForgetMade(ctx context.Context) error {
	var errs []error
	rm := s.room()
	for _, ns := range s.logins.Made() {
		if rm != nil {
			// A participant now on another server of the room holds the
			// same logins (renewed there): that server removes them when
			// it stops, or lab room --drop does.
			if on, err := rm.Holder(ctx, ns); err == nil && on != "" && !strings.HasPrefix(on, rm.Server+"#") && on != rm.Server {
				continue
			}
		}
		if err := s.logins.Forget(ctx, s.cfg.Services, ns); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ns, err))
			continue
		}
		s.logins.mu.Lock()
		delete(s.logins.made, ns)
		s.logins.mu.Unlock()
	}
	return errors.Join(errs...)
}

// ForgetExpired removes the logins a stopped class of room rm kept
// (lab serve --keep-logins) once their time has passed: every name the
// room has seen. It returns how many and until when they were kept.
func (s *Server) ForgetExpired(ctx context.Context, rm *room.Room) (int, string, error) {
	v, err := rm.Meta(ctx, "logins_until")
	if err != nil || v == "" {
		return 0, "", err
	}
	until, err := time.Parse(time.RFC3339, v)
	if err != nil || time.Now().Before(until) {
		return 0, v, nil // kept still (or not a time of the lab's: left alone)
	}
	names, err := rm.Names(ctx)
	if err != nil {
		return 0, v, err
	}
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var errs []error
	for _, ns := range names {
		errs = append(errs, s.logins.Forget(c, s.cfg.Services, ns))
	}
	if err := errors.Join(errs...); err != nil {
		return 0, v, err
	}
	return len(names), v, rm.SetMeta(ctx, "logins_until", "")
}
