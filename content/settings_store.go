package content

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/problem"
)

// LocaleUpdate is what PATCH /locales/{code} may change.
type LocaleUpdate struct {
	Name      *string `json:"name"`
	IsDefault *bool   `json:"isDefault"`
}

const (
	renameLocaleSQL     = `UPDATE locales SET name = $3 WHERE instance_id = $1 AND code = $2`
	clearDefaultSQL     = `UPDATE locales SET is_default = false WHERE instance_id = $1 AND is_default`
	setDefaultLocaleSQL = `UPDATE locales SET is_default = true,
			position = (SELECT min(position) - 1 FROM locales WHERE instance_id = $1)
		WHERE instance_id = $1 AND code = $2`
)

// UpdateLocale renames a locale or makes it the default (the one listed
// first). A default locale stops being one only when another becomes it
// (409). The locale's code never changes: copies and URLs use it.
func (s *Store) UpdateLocale(ctx context.Context, inst Instance, code string, in LocaleUpdate) (Locale, error) {
	l, err := s.Locale(ctx, inst, code)
	if err != nil {
		return Locale{}, err
	}
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		if n == "" || utf8.RuneCountInString(n) > 100 {
			return Locale{}, problem.Field("name", "must be 1 to 100 characters")
		}
		in.Name = &n
	}
	if in.IsDefault != nil && !*in.IsDefault && l.IsDefault {
		return Locale{}, problem.Conflictf("locale %q is the default; make another locale the default instead", l.Code)
	}
	err = s.transact(ctx, func(tx *sqlx.Tx) error {
		if in.Name != nil {
			if _, err := tx.ExecContext(ctx, renameLocaleSQL, inst.ID, l.Code, *in.Name); err != nil {
				return err
			}
			l.Name = *in.Name
		}
		if in.IsDefault != nil && *in.IsDefault && !l.IsDefault {
			if _, err := tx.ExecContext(ctx, clearDefaultSQL, inst.ID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, setDefaultLocaleSQL, inst.ID, l.Code); err != nil {
				return err
			}
			l.IsDefault = true
		}
		return nil
	})
	if err != nil {
		return Locale{}, fmt.Errorf("update locale %q: %w", code, err)
	}
	return l, nil
}

const (
	channelLiveSQL = `SELECT EXISTS (SELECT 1 FROM pages p JOIN page_copies c ON c.page_id = p.page_id
		WHERE p.channel_id = $1 AND c.state <> 3)`
	// Pages whose copies are all deleted go with their channel (their
	// copies and versions with them).
	deleteChannelPagesSQL = `DELETE FROM pages WHERE channel_id = $1`
	deleteChannelSQL      = `DELETE FROM channels WHERE id = $1`
)

// DeleteChannel deletes a sitemap channel that has no live pages left
// (pages deleted in every locale go with it). The channel website, which
// every instance has, stays.
func (s *Store) DeleteChannel(ctx context.Context, inst Instance, name string) error {
	return s.transact(ctx, func(tx *sqlx.Tx) error {
		ch, err := channelByName(ctx, tx, inst, name)
		if err != nil {
			return err
		}
		if strings.EqualFold(ch.Name, "website") {
			return problem.Conflictf("channel website is every instance's main sitemap and cannot be deleted")
		}
		if _, err := tx.ExecContext(ctx, lockChannelSQL, ch.ID); err != nil {
			return err
		}
		var live bool
		if err := tx.GetContext(ctx, &live, channelLiveSQL, ch.ID); err != nil {
			return err
		}
		if live {
			return problem.Conflictf("channel %q has pages; delete or move them first", ch.Name)
		}
		for _, q := range []string{deleteChannelPagesSQL, deleteChannelSQL} {
			if _, err := tx.ExecContext(ctx, q, ch.ID); err != nil {
				return err
			}
		}
		return appendChannelEvents(ctx, tx, inst, ch.Name, s.now())
	})
}
