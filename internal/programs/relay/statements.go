package relay

import (
	"fmt"
	"strings"
	"time"

	labsql "github.com/rmlab/lab/sql"
)

// The relay's statements live in sql/outbox/ so that lessons show the very
// text the relay sends; only the ? placeholders differ, and the relay's log
// prints each statement with its values filled in.
const (
	FileColumns          = "outbox/relay_columns.sql"
	FileClaimSelect      = "outbox/relay_claim_select.sql"
	FileClaimOrdered     = "outbox/relay_claim_select_ordered.sql"
	FileClaimUpdate      = "outbox/relay_claim_update.sql"
	FileMarkSent         = "outbox/relay_mark_sent.sql"
	FileClaimUpdateBatch = "outbox/relay_claim_update_batch.sql"
	FileMarkSentBatch    = "outbox/relay_mark_sent_batch.sql"
	FileMarkFailed       = "outbox/relay_mark_failed.sql"
	FileLeaseScan        = "outbox/relay_lease_scan.sql"
	FileClaimedIDs       = "outbox/relay_claimed_ids.sql"
	FileHasColumns       = "outbox/relay_has_columns.sql"
	skipLockedSuffix     = " SKIP LOCKED"
	maxErrorLength       = 255
	maxBackoffSeconds    = 300
)

// Statements are the relay's SQL texts, loaded once.
type Statements struct {
	Columns          []string
	ClaimSelect      string
	ClaimUpdate      string
	MarkSent         string
	ClaimUpdateBatch string
	MarkSentBatch    string
	MarkFailed       string
	LeaseScan        string
	ClaimedIDs       string
}

// LoadStatements reads the embedded files. ordered picks the per-aggregate
// claim; skipLocked=false drops SKIP LOCKED from the claim, which is the only
// difference between the two ways the lessons compare.
func LoadStatements(ordered, skipLocked bool) (*Statements, error) {
	one := func(name string) (string, error) {
		text, err := labsql.File(name)
		if err != nil {
			return "", err
		}
		stmts := labsql.Split(text)
		if len(stmts) != 1 {
			return "", fmt.Errorf("%s holds %d statements, the relay expects exactly one", name, len(stmts))
		}
		return stmts[0], nil
	}
	st := &Statements{}
	cols, err := labsql.File(FileColumns)
	if err != nil {
		return nil, err
	}
	st.Columns = labsql.Split(cols)
	claim := FileClaimSelect
	if ordered {
		claim = FileClaimOrdered
	}
	for _, f := range []struct {
		dst  *string
		name string
	}{{&st.ClaimSelect, claim}, {&st.ClaimUpdate, FileClaimUpdate}, {&st.MarkSent, FileMarkSent}, {&st.ClaimUpdateBatch, FileClaimUpdateBatch}, {&st.MarkSentBatch, FileMarkSentBatch},
		{&st.MarkFailed, FileMarkFailed}, {&st.LeaseScan, FileLeaseScan}, {&st.ClaimedIDs, FileClaimedIDs}} {
		if *f.dst, err = one(f.name); err != nil {
			return nil, err
		}
	}
	if !strings.HasSuffix(st.ClaimSelect, skipLockedSuffix) {
		return nil, fmt.Errorf("%s must end with FOR UPDATE SKIP LOCKED", claim)
	}
	if !skipLocked {
		st.ClaimSelect = strings.TrimSuffix(st.ClaimSelect, skipLockedSuffix)
	}
	return st, nil
}

// Render fills a statement's ? placeholders with args, quoted as the mysql
// client would show them, on one line: for the log only, never sent.
func Render(stmt string, args ...any) string {
	var b strings.Builder
	var quote rune
	i := 0
	for _, r := range stmt {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
			b.WriteRune(r)
		case r == '\'' || r == '"' || r == '`':
			quote = r
			b.WriteRune(r)
		case r == '?' && i < len(args):
			b.WriteString(literal(args[i]))
			i++
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func literal(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case []byte:
		return literal(string(x))
	case time.Time:
		return "'" + x.Format("2006-01-02 15:04:05.000000") + "'"
	default:
		return fmt.Sprint(x)
	}
}
