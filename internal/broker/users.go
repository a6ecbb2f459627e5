package broker

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/rmlab/lab/internal/services"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rmlab/lab/internal/secret"
)

// Permissions are a RabbitMQ user's three regular expressions on one vhost
// (configure, write, read). "^$" allows nothing.
type Permissions struct {
	Configure, Write, Read string
}

// Users adds and removes RabbitMQ users, for a party the lab gives only
// the permissions it needs (a challenge's program). Via says how, for the
// run's output.
type Users interface {
	// Add makes user name (or gives it a new password and tags), with
	// permissions p on vhost. Tags: "" or "management" (it may read its
	// vhosts through the management API).
	Add(ctx context.Context, name, password, tags, vhost string, p Permissions) error
	Delete(ctx context.Context, name string) error
	// AddVhost makes vhost if it does not exist; DeleteVhost removes it
	// with everything in it, and says whether there was one.
	AddVhost(ctx context.Context, vhost string) error
	DeleteVhost(ctx context.Context, vhost string) (bool, error)
	// AddLogin makes vhost (if missing, with limits lim: a zero field is
	// none) and user name in it, with tags and permissions p there. The
	// login may take a moment to work after it returns (rabbitmqctl
	// imports them in the background).
	AddLogin(ctx context.Context, vhost, name, password, tags string, p Permissions, lim Limits) error
	Via() string
}

// Limits bound what one vhost may hold (RabbitMQ's vhost limits): a
// participant's workers cannot take the broker's connections or fill it
// with queues.
type Limits struct {
	MaxConnections, MaxQueues int
}

// value is lim as the broker's vhost-limits parameter.
func (lim Limits) value() map[string]int {
	v := map[string]int{}
	if lim.MaxConnections > 0 {
		v["max-connections"] = lim.MaxConnections
	}
	if lim.MaxQueues > 0 {
		v["max-queues"] = lim.MaxQueues
	}
	return v
}

// ManagementUsers adds users through the management HTTP API (its user
// needs the administrator tag).
func ManagementUsers(m *Management) Users { return mgmtUsers{m} }

type mgmtUsers struct{ m *Management }

func (u mgmtUsers) Via() string { return "the management API at " + secret.URL(u.m.Base) }

func (u mgmtUsers) do(ctx context.Context, method, path string, body any) error {
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.m.Base+path, rd)
	if err != nil {
		return err
	}
	req.SetBasicAuth(u.m.User, u.m.Pass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := u.m.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("management API at %s: %w", secret.URL(u.m.Base), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 && !(method == http.MethodDelete && resp.StatusCode == http.StatusNotFound) {
		return fmt.Errorf("management API at %s answered HTTP %d to %s %s (user %s needs the administrator tag)",
			secret.URL(u.m.Base), resp.StatusCode, method, strings.SplitN(path, "/", 4)[2], u.m.User)
	}
	return nil
}

func (u mgmtUsers) Add(ctx context.Context, name, password, tags, vhost string, p Permissions) error {
	if err := u.do(ctx, http.MethodPut, "/api/users/"+url.PathEscape(name), map[string]string{"password": password, "tags": tags}); err != nil {
		return err
	}
	return u.do(ctx, http.MethodPut, "/api/permissions/"+url.PathEscape(vhost)+"/"+url.PathEscape(name),
		map[string]string{"configure": p.Configure, "write": p.Write, "read": p.Read})
}

func (u mgmtUsers) Delete(ctx context.Context, name string) error {
	return u.do(ctx, http.MethodDelete, "/api/users/"+url.PathEscape(name), nil)
}

func (u mgmtUsers) AddLogin(ctx context.Context, vhost, name, password, tags string, p Permissions, lim Limits) error {
	if err := u.AddVhost(ctx, vhost); err != nil {
		return err
	}
	for k, v := range lim.value() {
		if err := u.do(ctx, http.MethodPut, "/api/vhost-limits/"+url.PathEscape(vhost)+"/"+k, map[string]int{"value": v}); err != nil {
			return fmt.Errorf("limit vhost %s: %w", vhost, err)
		}
	}
	return u.Add(ctx, name, password, tags, vhost, p)
}

func (u mgmtUsers) AddVhost(ctx context.Context, vhost string) error {
	return u.do(ctx, http.MethodPut, "/api/vhosts/"+url.PathEscape(vhost), nil)
}

func (u mgmtUsers) DeleteVhost(ctx context.Context, vhost string) (bool, error) {
	resp, err := u.m.get(ctx, "/api/vhosts/"+url.PathEscape(vhost))
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	return true, u.do(ctx, http.MethodDelete, "/api/vhosts/"+url.PathEscape(vhost), nil)
}

// CtlUsers adds users with rabbitmqctl (ctl: the command, or a wrapper
// naming the node), for a local node the lab may control
// (--broker-control). The password goes on standard input, never on a
// command line another user could read.
func CtlUsers(ctl string) Users { return ctlUsers(ctl) }

type ctlUsers string

func (c ctlUsers) Via() string { return string(c) }

func (c ctlUsers) run(ctx context.Context, stdin string, args ...string) error {
	cmd := exec.CommandContext(ctx, string(c), args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", c, args[0], err, lastLines(string(out), 2))
	}
	return nil
}

// Add is one import_definitions (AddLogin), not add_user, set_user_tags and
// set_permissions: each rabbitmqctl run starts a VM, and three of them
// took past 20 s on a loaded machine.
func (c ctlUsers) Add(ctx context.Context, name, password, tags, vhost string, p Permissions) error {
	return c.AddLogin(ctx, vhost, name, password, tags, p, Limits{})
}

// AddLogin imports the vhost, user and permissions as definitions, one
// rabbitmqctl for every login asked for meanwhile: a class logging in at
// once cost 40 × 4 rabbitmqctl runs (each starts a VM), and screens waited
// past 30 s.
func (c ctlUsers) AddLogin(ctx context.Context, vhost, name, password, tags string, p Permissions, lim Limits) error {
	return importerFor(string(c)).add(ctx, login{vhost, name, password, tags, p, lim})
}

func (c ctlUsers) AddVhost(ctx context.Context, vhost string) error {
	err := c.run(ctx, "", "add_vhost", vhost)
	if err != nil && strings.Contains(err.Error(), "already exists") {
		return nil
	}
	return err
}

func (c ctlUsers) DeleteVhost(ctx context.Context, vhost string) (bool, error) {
	err := c.run(ctx, "", "delete_vhost", vhost)
	if err != nil && strings.Contains(err.Error(), "does not exist") {
		return false, nil
	}
	return err == nil, err
}

func (c ctlUsers) Delete(ctx context.Context, name string) error {
	err := c.run(ctx, "", "delete_user", name)
	if err != nil && strings.Contains(err.Error(), "does not exist") {
		return nil
	}
	return err
}

// UsersFor is how the lab can make RabbitMQ users on the broker at
// amqpURL: the management API when it answers that URL's login as an
// administrator, else rabbitmqctl on a local node the lab may control
// (cfg.BrokerControl "rabbitmqctl"); nil, with why, when neither.
func UsersFor(ctx context.Context, amqpURL string, cfg services.Config) (Users, string) {
	why := "no management API answers"
	if m, err := ManagementFor(amqpURL, cfg.Management); err == nil {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		admin, err := m.administrator(c)
		cancel()
		switch {
		case err == nil && admin:
			return ManagementUsers(m), ""
		case err == nil:
			why = "the management API's user " + m.User + " has no administrator tag"
		}
	}
	if cfg.BrokerControl == "rabbitmqctl" {
		if u, err := url.Parse(amqpURL); err == nil && services.IsLocal(u.Hostname()) {
			return CtlUsers(cfg.Rabbitmqctl), ""
		}
		return nil, why + ", and rabbitmqctl reaches a local node only"
	}
	return nil, why + " and the lab may not run rabbitmqctl here (--broker-control rabbitmqctl)"
}

// administrator says whether the API's user has the administrator tag (it
// may make users).
func (m *Management) administrator(ctx context.Context) (bool, error) {
	resp, err := m.get(ctx, "/api/whoami")
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var who struct {
		Tags any `json:"tags"` // a string before 3.12ish, a list after
	}
	if err := json.NewDecoder(resp.Body).Decode(&who); err != nil {
		return false, err
	}
	return strings.Contains(fmt.Sprint(who.Tags), "administrator"), nil
}

// VhostExists asks the broker at amqpURL whether vhost exists, by logging
// in to it with amqpURL's login: cheap where a user list is not
// (rabbitmqctl starts a VM), so a cleaner can ask for every namespace.
func VhostExists(ctx context.Context, amqpURL, vhost string) (bool, error) {
	u, err := url.Parse(amqpURL)
	if err != nil {
		return false, fmt.Errorf("the AMQP URL cannot be read")
	}
	u.Path, u.RawPath = "/"+vhost, "/"+url.PathEscape(vhost)
	conn, err := services.DialAMQP(ctx, u.String())
	if err == nil {
		conn.Close()
		return true, nil
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotAllowed {
		// "vhost X not found", or "access to vhost 'X' refused for user":
		// it is there, the lab's login only has no permissions in it.
		return !strings.Contains(ae.Reason, "not found"), nil
	}
	return false, fmt.Errorf("log in to RabbitMQ vhost %s at %s: %w", vhost, secret.URL(amqpURL), err)
}

// login is one vhost with one user allowed in it.
type login struct {
	vhost, name, password, tags string
	p                           Permissions
	lim                         Limits
}

// importer runs rabbitmqctl import_definitions for the logins asked for
// while the previous import ran, as one batch.
type importer struct {
	ctl   string
	mu    sync.Mutex
	queue []*waiting
	busy  bool
}

type waiting struct {
	l    login
	done chan error
}

var (
	importersMu sync.Mutex
	importers   = map[string]*importer{}
)

func importerFor(ctl string) *importer {
	importersMu.Lock()
	defer importersMu.Unlock()
	if importers[ctl] == nil {
		importers[ctl] = &importer{ctl: ctl}
	}
	return importers[ctl]
}

func (im *importer) add(ctx context.Context, l login) error {
	w := &waiting{l: l, done: make(chan error, 1)}
	im.mu.Lock()
	im.queue = append(im.queue, w)
	lead := !im.busy
	im.busy = true
	im.mu.Unlock()
	if lead {
		go im.run()
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (im *importer) run() {
	for {
		time.Sleep(50 * time.Millisecond) // the logins asked for together
		im.mu.Lock()
		batch := im.queue
		im.queue = nil
		if len(batch) == 0 {
			im.busy = false
			im.mu.Unlock()
			return
		}
		im.mu.Unlock()
		ls := make([]login, len(batch))
		for i, w := range batch {
			ls[i] = w.l
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := ctlUsers(im.ctl).run(ctx, string(definitions(ls)), "import_definitions")
		cancel()
		for _, w := range batch {
			w.done <- err
		}
	}
}

// definitions are ls as RabbitMQ's definitions: the password as the
// broker stores it (SHA-256 of a 4-byte salt and the password, after the
// salt), never in clear on a command line or in a file.
func definitions(ls []login) []byte {
	type user struct {
		Name      string   `json:"name"`
		Hash      string   `json:"password_hash"`
		Algorithm string   `json:"hashing_algorithm"`
		Tags      []string `json:"tags"`
	}
	type vhost struct {
		Name string `json:"name"`
	}
	type perm struct {
		User      string `json:"user"`
		Vhost     string `json:"vhost"`
		Configure string `json:"configure"`
		Write     string `json:"write"`
		Read      string `json:"read"`
	}
	type param struct {
		Vhost     string         `json:"vhost"`
		Component string         `json:"component"`
		Name      string         `json:"name"`
		Value     map[string]int `json:"value"`
	}
	var d struct {
		Users       []user  `json:"users"`
		Vhosts      []vhost `json:"vhosts"`
		Permissions []perm  `json:"permissions"`
		Parameters  []param `json:"parameters,omitempty"`
	}
	for _, l := range ls {
		salt := make([]byte, 4)
		rand.Read(salt)
		sum := sha256.Sum256(append(append([]byte{}, salt...), l.password...))
		tags := []string{}
		if l.tags != "" {
			tags = strings.Split(l.tags, ",")
		}
		d.Users = append(d.Users, user{l.name, base64.StdEncoding.EncodeToString(append(salt, sum[:]...)), "rabbit_password_hashing_sha256", tags})
		d.Vhosts = append(d.Vhosts, vhost{l.vhost})
		d.Permissions = append(d.Permissions, perm{l.name, l.vhost, l.p.Configure, l.p.Write, l.p.Read})
		if v := l.lim.value(); len(v) > 0 {
			d.Parameters = append(d.Parameters, param{l.vhost, "vhost-limits", "limits", v})
		}
	}
	b, _ := json.Marshal(d)
	return b
}
