package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"

	"github.com/rmlab/lab/secret"
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
	Add(ctx context.Context, name, password, vhost string, p Permissions) error
	Delete(ctx context.Context, name string) error
	Via() string
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

func (u mgmtUsers) Add(ctx context.Context, name, password, vhost string, p Permissions) error {
	if err := u.do(ctx, http.MethodPut, "/api/users/"+url.PathEscape(name), map[string]string{"password": password, "tags": ""}); err != nil {
		return err
	}
	return u.do(ctx, http.MethodPut, "/api/permissions/"+url.PathEscape(vhost)+"/"+url.PathEscape(name),
		map[string]string{"configure": p.Configure, "write": p.Write, "read": p.Read})
}

func (u mgmtUsers) Delete(ctx context.Context, name string) error {
	return u.do(ctx, http.MethodDelete, "/api/users/"+url.PathEscape(name), nil)
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

func (c ctlUsers) Add(ctx context.Context, name, password, vhost string, p Permissions) error {
	if err := c.run(ctx, password+"\n", "add_user", name); err != nil {
		return err
	}
	return c.run(ctx, "", "set_permissions", "-p", vhost, name, p.Configure, p.Write, p.Read)
}

func (c ctlUsers) Delete(ctx context.Context, name string) error {
	err := c.run(ctx, "", "delete_user", name)
	if err != nil && strings.Contains(err.Error(), "does not exist") {
		return nil
	}
	return err
}
