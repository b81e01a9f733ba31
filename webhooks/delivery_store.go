package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/problem"
)

// The statuses of a delivery (see README.md for the state machine).
const (
	StatusQueued    = "queued"    // waiting for its first attempt
	StatusRetrying  = "retrying"  // failed, waiting for a retry at nextAttemptUtc
	StatusSucceeded = "succeeded" // an attempt got a 2xx
	StatusFailed    = "failed"    // failed with no retry left
)

// Delivery is a delivery history record with the spec's fields, plus its
// status.
type Delivery struct {
	RowKey               string     `json:"rowKey"`
	WebhookRowKey        string     `json:"webhookRowKey"`
	EventKey             string     `json:"eventKey"`
	ContentPublishEvent  bool       `json:"contentPublishEvent"`
	ContentSaveEvent     bool       `json:"contentSaveEvent"`
	ContentWorkflowEvent bool       `json:"contentWorkflowEvent"`
	Payload              string     `json:"payload"`
	QueuedDate           time.Time  `json:"queuedDate"`
	LastAttemptDate      *time.Time `json:"lastAttemptDate,omitempty"`
	SendDate             *time.Time `json:"sendDate,omitempty"`
	HTTPResponseCode     int        `json:"httpResponseCode"`
	Success              bool       `json:"success"`
	ResponseText         string     `json:"responseText"`
	AttemptCount         int        `json:"attemptCount"`
	NextAttemptUtc       *time.Time `json:"nextAttemptUtc,omitempty"`
	LastError            string     `json:"lastError,omitempty"`
	Signed               bool       `json:"signed"`
	SignatureKeyCount    int        `json:"signatureKeyCount"`
	Status               string     `json:"status"`
}

// deliveryRow is a row of webhook_deliveries.
type deliveryRow struct {
	ID                string     `db:"id"`
	WebhookID         string     `db:"webhook_id"`
	EventKey          string     `db:"event_key"`
	EventID           *int64     `db:"event_id"`
	MergeKey          *string    `db:"merge_key"`
	PublishEvent      bool       `db:"publish_event"`
	SaveEvent         bool       `db:"save_event"`
	WorkflowEvent     bool       `db:"workflow_event"`
	Payload           []byte     `db:"payload"`
	Status            string     `db:"status"`
	QueuedAt          time.Time  `db:"queued_at"`
	DueAt             time.Time  `db:"due_at"`
	LeaseOwner        *string    `db:"lease_owner"`
	LeaseUntil        *time.Time `db:"lease_until"`
	ChainAttempts     int        `db:"chain_attempts"`
	AttemptCount      int        `db:"attempt_count"`
	LastAttemptAt     *time.Time `db:"last_attempt_at"`
	SentAt            *time.Time `db:"sent_at"`
	NextAttemptAt     *time.Time `db:"next_attempt_at"`
	HTTPStatus        int        `db:"http_status"`
	ResponseText      string     `db:"response_text"`
	LastError         string     `db:"last_error"`
	Signed            bool       `db:"signed"`
	SignatureKeyCount int        `db:"signature_key_count"`
}

const deliveryColumns = `d.id, d.webhook_id, d.event_key, d.event_id, d.merge_key, d.publish_event, d.save_event,
	d.workflow_event, d.payload, d.status, d.queued_at, d.due_at, d.lease_owner, d.lease_until, d.chain_attempts,
	d.attempt_count, d.last_attempt_at, d.sent_at, d.next_attempt_at, d.http_status, d.response_text,
	d.last_error, d.signed, d.signature_key_count`

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// view turns a row into its history record.
func (d deliveryRow) view() Delivery {
	v := Delivery{
		RowKey: d.ID, WebhookRowKey: d.WebhookID, EventKey: d.EventKey,
		ContentPublishEvent: d.PublishEvent, ContentSaveEvent: d.SaveEvent, ContentWorkflowEvent: d.WorkflowEvent,
		Payload: string(d.Payload), QueuedDate: d.QueuedAt.UTC(), LastAttemptDate: utc(d.LastAttemptAt),
		HTTPResponseCode: d.HTTPStatus, Success: d.Status == StatusSucceeded, ResponseText: d.ResponseText,
		AttemptCount: d.AttemptCount, LastError: d.LastError, Signed: d.Signed,
		SignatureKeyCount: d.SignatureKeyCount, Status: d.Status,
	}
	if d.Status == StatusSucceeded {
		v.SendDate = utc(d.SentAt)
	}
	if d.Status == StatusRetrying {
		v.NextAttemptUtc = utc(d.NextAttemptAt)
	}
	return v
}

const getDeliverySQL = `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
	WHERE w.instance_id = $1 AND d.webhook_id = $2 AND d.id = $3`

// Delivery returns the history record rowKey of webhook id of inst.
func (s *Store) Delivery(ctx context.Context, inst content.Instance, id, rowKey string) (Delivery, error) {
	var d deliveryRow
	err := s.db.GetContext(ctx, &d, getDeliverySQL, inst.ID, id, rowKey)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.Webhook(ctx, inst, id); err != nil {
			return Delivery{}, err
		}
		return Delivery{}, problem.NotFoundf("no delivery %q of webhook %q", rowKey, id)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("delivery %s: %w", rowKey, err)
	}
	return d.view(), nil
}

// HistoryQuery is a history request as the query string gives it: dates as
// YYYY-MM-DD (or RFC 3339, of which the UTC date counts), take and the
// continuation token of the previous page. Empty members take their
// defaults.
type HistoryQuery struct {
	FromDate, ToDate, Take, Token string
}

// Bounds of a history query.
const (
	// DefaultHistoryDays is how far before toDate fromDate defaults to.
	DefaultHistoryDays = 7
	// MaxHistoryDays is the longest range from fromDate to toDate.
	MaxHistoryDays = 366
)

// HistoryPage is one page of delivery history records, newest first, and
// the token of the next page (nil on the last).
type HistoryPage struct {
	Items []Delivery `json:"items"`
	Token *string    `json:"token"`
}

// parseDate parses a history date: YYYY-MM-DD or an RFC 3339 time, as the
// start of its UTC day.
func parseDate(field, s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t, err = time.Parse(time.RFC3339, s)
	}
	if err != nil {
		return time.Time{}, problem.Field(field, "must be a date like 2026-01-31")
	}
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
}

// parse validates q and returns the range [from, to) of queue times, the
// page size and the position after which the page starts.
func (s *Store) parseHistory(inst content.Instance, id string, q HistoryQuery) (from, to time.Time, take int, after *position, err error) {
	y, m, d := s.now().Date()
	toDay := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if q.ToDate != "" {
		if toDay, err = parseDate("toDate", q.ToDate); err != nil {
			return
		}
	}
	from = toDay.AddDate(0, 0, -DefaultHistoryDays)
	if q.FromDate != "" {
		if from, err = parseDate("fromDate", q.FromDate); err != nil {
			return
		}
	}
	switch {
	case from.After(toDay):
		err = problem.Field("fromDate", "must not be after toDate")
		return
	case toDay.Sub(from) > MaxHistoryDays*24*time.Hour:
		err = problem.Field("fromDate", "the range from fromDate to toDate must be at most %d days", MaxHistoryDays)
		return
	}
	to = toDay.AddDate(0, 0, 1)
	take = DefaultTake
	if q.Take != "" {
		take, err = strconv.Atoi(q.Take)
		if err != nil || take < 1 || take > MaxTake {
			err = problem.Field("take", "must be an integer from 1 to %d", MaxTake)
			return
		}
	}
	if q.Token != "" {
		var p position
		if p, err = s.decodeToken(q.Token, "history", inst, id); err != nil {
			return
		}
		after = &p
	}
	return
}

const historySQL = `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d
	WHERE d.webhook_id = $1 AND d.queued_at >= $2 AND d.queued_at < $3
	  AND ($4::timestamptz IS NULL OR (d.queued_at, d.id) < ($4, $5))
	ORDER BY d.queued_at DESC, d.id DESC LIMIT $6`

// History returns a page of the delivery history of webhook id of inst,
// newest first. toDate defaults to today and fromDate to DefaultHistoryDays
// before it; both days count. A range over MaxHistoryDays, a take outside 1
// to MaxTake, a bad date or a token that is not one this listing made is an
// Invalid problem.
func (s *Store) History(ctx context.Context, inst content.Instance, id string, q HistoryQuery) (HistoryPage, error) {
	from, to, take, after, err := s.parseHistory(inst, id, q)
	if err != nil {
		return HistoryPage{}, err
	}
	if _, err := loadWebhook(ctx, s.db, getWebhookSQL, inst, id); err != nil {
		return HistoryPage{}, err
	}
	var afterT *time.Time
	afterID := ""
	if after != nil {
		afterT, afterID = &after.T, after.ID
	}
	var rows []deliveryRow
	if err := s.db.SelectContext(ctx, &rows, historySQL, id, from, to, afterT, afterID, take+1); err != nil {
		return HistoryPage{}, fmt.Errorf("history of webhook %s: %w", id, err)
	}
	page := HistoryPage{Items: []Delivery{}}
	if len(rows) > take {
		rows = rows[:take]
		last := rows[take-1]
		t := s.encodeToken("history", inst, id, position{T: last.QueuedAt, ID: last.ID})
		page.Token = &t
	}
	for _, r := range rows {
		page.Items = append(page.Items, r.view())
	}
	return page, nil
}

const redeliverSQL = `UPDATE webhook_deliveries d SET status = 'queued', queued_at = $4, due_at = $4,
		chain_attempts = 0, next_attempt_at = NULL, sent_at = NULL, lease_owner = NULL, lease_until = NULL
	FROM webhooks w
	WHERE w.id = d.webhook_id AND w.instance_id = $1 AND d.webhook_id = $2 AND d.id = $3
	  AND (d.lease_until IS NULL OR d.lease_until < $4)
	RETURNING ` + deliveryColumns

// Redeliver queues delivery rowKey of webhook id again, now, with the same
// payload and the same webhook-id, and with the webhook's retries as for a
// new delivery. A delivery being attempted right now is a Conflict problem.
func (s *Store) Redeliver(ctx context.Context, inst content.Instance, id, rowKey string) (Delivery, error) {
	w, err := loadWebhook(ctx, s.db, getWebhookSQL, inst, id)
	if err != nil {
		return Delivery{}, err
	}
	if !w.Enabled {
		return Delivery{}, problem.Conflictf("webhook %q is disabled: enable it to redeliver", id)
	}
	var d deliveryRow
	err = s.db.GetContext(ctx, &d, redeliverSQL, inst.ID, id, rowKey, s.now())
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.Delivery(ctx, inst, id, rowKey); err != nil {
			return Delivery{}, err
		}
		return Delivery{}, problem.Conflictf("delivery %q is being attempted right now; try again when the attempt ends", rowKey)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("redeliver %s: %w", rowKey, err)
	}
	// Wake listening dispatchers; without one, the next poll finds it.
	s.db.ExecContext(ctx, `SELECT pg_notify('`+notifyDeliveries+`', '')`)
	return d.view(), nil
}

// TestState is the payload state of a test delivery.
const TestState = "Test"

// testPayload is the body of a test delivery: the fields every event has.
func testPayload(guid string, now time.Time) []byte {
	b, _ := json.Marshal(map[string]any{
		"state":         TestState,
		"instanceGuid":  guid,
		"changeDateUTC": now.UTC().Format("2006-01-02T15:04:05.000Z"),
	})
	return b
}

// Test sends a test delivery to webhook id now, whether or not the webhook
// is enabled, and returns its history record. The payload has the fields
// every event has, with state "Test". It is attempted once, signed as any
// delivery of the webhook; it is not retried (redeliver it to try again).
func (s *Store) Test(ctx context.Context, inst content.Instance, id string) (Delivery, error) {
	w, err := loadWebhook(ctx, s.db, getWebhookSQL, inst, id)
	if err != nil {
		return Delivery{}, err
	}
	now := s.now()
	owner := "test:" + newID("")
	d := deliveryRow{ID: newID("msg_"), WebhookID: id, EventKey: newID("evt_"), Payload: testPayload(inst.Guid, now),
		Status: StatusQueued, QueuedAt: now, DueAt: now, LeaseOwner: &owner}
	until := now.Add(s.timeout + time.Minute)
	d.LeaseUntil = &until
	if _, err := s.db.NamedExecContext(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_key, payload,
		status, queued_at, due_at, lease_owner, lease_until) VALUES (:id, :webhook_id, :event_key, :payload,
		:status, :queued_at, :due_at, :lease_owner, :lease_until)`, d); err != nil {
		return Delivery{}, fmt.Errorf("test webhook %s: %w", id, err)
	}
	j := job{DeliveryID: d.ID, Payload: d.Payload, webhookRow: w}
	j.RetriesEnabled = false // a test is attempted once
	j.Breaker = true         // an answer closes the webhook's breaker, if it has one
	res := s.complete(j, s.attempt(ctx, j), nil)
	if _, err := s.record(context.WithoutCancel(ctx), owner, []result{res}); err != nil {
		return Delivery{}, fmt.Errorf("test webhook %s: %w", id, err)
	}
	return s.Delivery(ctx, inst, id, d.ID)
}

// Trim deletes the delivery history queued before before, in batches, and
// returns how many records it deleted.
func (s *Store) Trim(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		res, err := s.db.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE id IN
			(SELECT id FROM webhook_deliveries WHERE queued_at < $1 LIMIT 5000)`, before)
		if err != nil {
			return total, fmt.Errorf("trim delivery history: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n < 5000 {
			return total, nil
		}
	}
}

// clip shortens s, which is valid UTF-8, to at most n bytes on a character
// boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
