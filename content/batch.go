package content

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/problem"
)

// MaxBatch is the most items and pages one batch may name.
const MaxBatch = 500

// Batch is one workflow action on several items and pages of one locale.
type Batch struct {
	Action Action  `json:"action"`
	Items  []int64 `json:"items"`
	Pages  []int64 `json:"pages"`
}

// BatchResult is the state each copy of a batch reached.
type BatchResult struct {
	Items []BatchState `json:"items"`
	Pages []BatchState `json:"pages"`
}

// BatchState is where one copy of a batch ended.
type BatchState struct {
	ContentID int64 `json:"contentID,omitempty"`
	PageID    int64 `json:"pageID,omitempty"`
	State     State `json:"state"`
}

// ParseBatchAction returns the action a batch names: a workflow action or
// delete.
func ParseBatchAction(s string) (Action, error) {
	if s == string(ActionDelete) {
		return ActionDelete, nil
	}
	a, err := ParseAction(s)
	if err != nil {
		return "", problem.Field("action", "must be publish, unpublish, request-approval, approve, decline or delete")
	}
	return a, nil
}

func (b Batch) validate() error {
	if len(b.Items)+len(b.Pages) == 0 {
		return problem.Field("items", "name at least one item or page")
	}
	if n := len(b.Items) + len(b.Pages); n > MaxBatch {
		return problem.Field("items", "a batch names at most %d items and pages; this one names %d", MaxBatch, n)
	}
	for name, ids := range map[string][]int64{"items": b.Items, "pages": b.Pages} {
		seen := map[int64]bool{}
		for _, id := range ids {
			if id <= 0 {
				return problem.Field(name, "ids must be positive")
			}
			if seen[id] {
				return problem.Field(name, "%d is listed twice", id)
			}
			seen[id] = true
		}
	}
	return nil
}

// ApplyBatch takes one workflow action on every item and page of b in
// locale, in one transaction: all of them or none. The first that cannot
// take it answers (409 naming it and why, 404 for one that does not
// exist), and nothing changes.
func (s *Store) ApplyBatch(ctx context.Context, inst Instance, locale string, b Batch) (BatchResult, error) {
	if err := b.validate(); err != nil {
		return BatchResult{}, err
	}
	out := BatchResult{Items: []BatchState{}, Pages: []BatchState{}}
	err := s.transact(ctx, func(tx *sqlx.Tx) error {
		out.Items, out.Pages = out.Items[:0], out.Pages[:0]
		now := s.now()
		for _, id := range b.Items {
			st, err := batchItem(ctx, tx, inst, locale, id, b.Action, now)
			if err != nil {
				return wrapBatch(err, "item", id)
			}
			out.Items = append(out.Items, BatchState{ContentID: id, State: st.State})
		}
		for _, id := range b.Pages {
			st, err := pageAction(ctx, tx, inst, locale, id, b.Action, now)
			if err != nil {
				return wrapBatch(err, "page", id)
			}
			out.Pages = append(out.Pages, BatchState{PageID: id, State: st.State})
		}
		return nil
	})
	if err != nil {
		return BatchResult{}, fmt.Errorf("batch %s: %w", b.Action, err)
	}
	return out, nil
}

func batchItem(ctx context.Context, tx *sqlx.Tx, inst Instance, locale string, id int64, a Action, now time.Time) (Status, error) {
	h, _, err := lockItem(ctx, tx, inst, id)
	if err != nil {
		return Status{}, err
	}
	c, err := loadCopy(ctx, tx, id, locale)
	if err != nil {
		return Status{}, err
	}
	return applyItemAction(ctx, tx, inst, h, c, a, now)
}

// wrapBatch names the copy a batch stopped at in the problem it answers.
func wrapBatch(err error, what string, id int64) error {
	var pe *problem.Error
	if errors.As(err, &pe) {
		out := *pe
		out.Detail = fmt.Sprintf("%s %d: %s; nothing in the batch changed", what, id, pe.Detail)
		out.Extra = map[string]any{"failed": map[string]any{"kind": what, "id": id}}
		return &out
	}
	return err
}
