package services

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	lab "github.com/rmlab/lab"
	labsql "github.com/rmlab/lab/sql"
)

// MarkTable is created inside every database the lab creates. The lab drops
// a database only when it carries this mark, so a learner's or a colleague's
// database that happens to share a lab name is never touched.
const MarkTable = "lab_created_by_reliable_messaging_lab"

// DropOwned drops database name (already namespaced) if it exists and carries
// the lab's mark, and says whether it dropped one. A database of that name
// without the mark is refused with a clear error and nothing is dropped.
func DropOwned(ctx context.Context, db *sql.DB, name string) (dropped bool, err error) {
	var n int
	if err := db.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&n); err != nil {
		return false, fmt.Errorf("look up database %s: %w", name, err)
	}
	if n == 0 {
		return false, nil
	}
	if err := db.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", name, MarkTable).Scan(&n); err != nil {
		return false, fmt.Errorf("look for the lab's mark in %s: %w", name, err)
	}
	if n == 0 {
		return false, &lab.Error{
			What:  fmt.Sprintf("database %s exists but was not created by the lab; nothing was dropped", name),
			Where: "MySQL",
			Fix:   "use another namespace (--namespace NAME gives " + name + "_NAME), or drop or rename that database yourself if it is disposable",
		}
	}
	// A session elsewhere (another lab on the same namespace) holding a
	// transaction on the database would make DROP wait on a metadata lock
	// for a year by default: bound it and say who to blame.
	c, err := db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "SET SESSION lock_wait_timeout = 10"); err != nil {
		return false, err
	}
	// MySQL 8 may choose a DROP DATABASE as a deadlock's victim when
	// others run beside it (the data dictionary's locks): it is only asked
	// again.
	drop := func() error {
		_, err := c.ExecContext(ctx, "DROP DATABASE `"+name+"`")
		return err
	}
	err = drop()
	for try := 0; try < 3 && Code(err) == ErLockDeadlock; try++ {
		time.Sleep(time.Duration(100*(try+1)) * time.Millisecond)
		err = drop()
	}
	if err != nil {
		var me *gomysql.MySQLError
		if errors.As(err, &me) && me.Number == ErLockWaitTimeout {
			return false, &lab.Error{What: fmt.Sprintf("database %s is in use by another session; it was not dropped", name), Where: "MySQL",
				Fix: "finish or quit the other lab using this namespace, or pick another with --namespace", Err: err}
		}
		return false, fmt.Errorf("drop database %s: %w", name, err)
	}
	return true, nil
}

// Mark records that the lab created database name (for no room: a lab run
// of its own).
func Mark(ctx context.Context, db *sql.DB, name string) error { return MarkFor(ctx, db, name, "") }

// MarkFor records that the lab created database name for owner: "room
// NAME" for a workshop participant's, "" for a lab run of its own. Claim
// reads it back.
func MarkFor(ctx context.Context, db *sql.DB, name, owner string) error {
	_, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS `"+name+"`.`"+MarkTable+
		"` (created_at DATETIME(6) NOT NULL, owner VARCHAR(64) NOT NULL DEFAULT '') ENGINE=InnoDB COMMENT='the reliable-messaging lab created this database and may drop it'")
	if err == nil {
		_, err = db.ExecContext(ctx, "INSERT INTO `"+name+"`.`"+MarkTable+"` (created_at, owner) VALUES (NOW(6), ?)", owner)
	}
	if err != nil {
		return fmt.Errorf("mark database %s as the lab's: %w", name, err)
	}
	return nil
}

// ownerOf is who database name was made for: exists and marked say
// whether it is there and carries the lab's mark; a mark from before
// owners were kept is a lab run's of its own ("").
func ownerOf(ctx context.Context, db *sql.DB, name string) (exists, marked bool, owner string, err error) {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&n); err != nil || n == 0 {
		return false, false, "", err
	}
	if err := db.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", name, MarkTable).Scan(&n); err != nil || n == 0 {
		return true, false, "", err
	}
	err = db.QueryRowContext(ctx, "SELECT owner FROM `"+name+"`.`"+MarkTable+"` ORDER BY created_at DESC LIMIT 1").Scan(&owner)
	switch {
	case Code(err) == ErBadField, errors.Is(err, sql.ErrNoRows):
		return true, true, "", nil
	case err != nil:
		return true, true, "", fmt.Errorf("read the lab's mark in %s: %w", name, err)
	}
	return true, true, owner, nil
}

// Claim checks that namespace ns may be given to owner: none of the
// article's databases in it exists, or each was made for owner. A
// participant who logs in as a name whose databases someone's own lab run
// made (lab --namespace NAME on the same server) would otherwise be
// granted them, rows and all.
func Claim(ctx context.Context, db *sql.DB, ns, owner string) error {
	names := Names{NS: ns}
	for _, article := range []string{IdempotencyDB, OutboxDB} {
		name := names.Name(article)
		exists, marked, has, err := ownerOf(ctx, db, name)
		switch {
		case err != nil:
			return err
		case !exists || marked && has == owner:
			continue
		case !marked:
			return &lab.Error{What: fmt.Sprintf("the name %s is taken: database %s exists and the lab did not make it", ns, name), Where: "MySQL",
				Fix: "log in under another name (ssh OTHER@HOST)"}
		case has == "":
			return &lab.Error{What: fmt.Sprintf("the name %s is taken: database %s belongs to a lab run outside the workshop (lab --namespace %s)", ns, name, ns), Where: "MySQL",
				Fix: "log in under another name (ssh OTHER@HOST); its owner removes it with lab clean --namespace " + ns}
		default:
			return &lab.Error{What: fmt.Sprintf("the name %s is taken: database %s belongs to %s", ns, name, has), Where: "MySQL",
				Fix: "log in under another name (ssh OTHER@HOST), or ask the instructor of " + has + " to free it (lab room --reset " + ns + ")"}
		}
	}
	return nil
}

// Recreate drops the article's database db under names (only one the lab
// created), runs its schema from sql/ and then each extra embedded file,
// and marks it as the lab's. It returns the namespaced name.
func Recreate(ctx context.Context, server *sql.DB, names Names, db string, extra ...string) (string, error) {
	name := names.Name(db)
	if _, err := DropOwned(ctx, server, name); err != nil {
		return "", err
	}
	var stmts []string
	for _, f := range append([]string{labsql.Schema(db)}, extra...) {
		text, err := labsql.File(f)
		if err != nil {
			return "", err
		}
		stmts = append(stmts, labsql.Split(text)...)
	}
	c, err := server.Conn(ctx) // one session: the schema's USE holds for what follows
	if err != nil {
		return "", err
	}
	defer c.Close()
	for _, st := range stmts {
		if _, err := c.ExecContext(ctx, names.SQL(st)); err != nil {
			return "", fmt.Errorf("create %s: %s: %w", name, strings.SplitN(st, "\n", 2)[0], err)
		}
	}
	if err := Mark(ctx, server, name); err != nil {
		return "", err
	}
	return name, nil
}
