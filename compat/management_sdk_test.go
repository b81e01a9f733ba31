package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgecms/edgecms/origin"
	"github.com/edgecms/edgecms/webhooks"
)

// mgmtCall is one call of the management SDK runner: an SDK method as
// "group.name" and its arguments.
type mgmtCall struct {
	Method string `json:"method"`
	Args   []any  `json:"args"`
}

type mgmtResult struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

func (r mgmtResult) String() string {
	if r.OK {
		return fmt.Sprintf("ok %s", r.Result)
	}
	return fmt.Sprintf("%s (status %d): %s", r.Error, r.Status, r.Body)
}

// runManagementSDK runs the calls through the real @agility/management-sdk.
func (s *service) runManagementSDK(t *testing.T, calls []mgmtCall) []mgmtResult {
	t.Helper()
	if _, err := os.Stat(filepath.Join(compatDir(t), "node_modules", "@agility", "management-sdk")); err != nil {
		t.Fatalf("@agility/management-sdk is not installed: run scripts/test.sh (or npm ci in scripts/compat): %v", err)
	}
	return runNode[mgmtResult](t, s, "management-sdk.js", map[string]any{"baseUrl": s.base, "token": s.token, "calls": calls}, len(calls))
}

// TestManagementSDKWebhooks saves, reads, lists and deletes webhooks with
// the real @agility/management-sdk over HTTPS. The SDK's Webhook model
// carries instanceGuid, which it sends with every save: a save naming the
// instance of its URL (in any case) is accepted, one naming another
// instance is refused with a 400 naming the field, and nothing is written.
func TestManagementSDKWebhooks(t *testing.T) {
	t.Parallel()
	s := fill(t)
	hooks, err := webhooks.NewStore(s.store.DB(), webhooks.Options{Key: bytes.Repeat([]byte{5}, webhooks.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	s.serve(t, origin.Config{Webhooks: hooks})
	guid := s.inst.Guid

	// The SDK's Webhook model, as a site would fill it.
	hook := func(name, instanceGuid string) map[string]any {
		return map[string]any{"name": name, "url": "https://hooks.example.com/" + name, "instanceGuid": instanceGuid,
			"enabled": true, "contentPublishEvents": true, "contentSaveEvents": false, "contentWorkflowEvents": false}
	}
	res := s.runManagementSDK(t, []mgmtCall{
		{"webhookMethods.saveWebhook", []any{guid, hook("rebuild", guid)}},
		{"webhookMethods.saveWebhook", []any{guid, hook("upper", strings.ToUpper(guid))}},
		{"webhookMethods.saveWebhook", []any{guid, hook("unnamed", "")}},
		{"webhookMethods.saveWebhook", []any{guid, hook("foreign", "elsewhere")}},
		{"webhookMethods.webhookList", []any{guid}},
	})
	var saved []webhooks.Webhook
	for i, r := range res[:2] {
		var w webhooks.Webhook
		if !r.OK || json.Unmarshal(r.Result, &w) != nil || w.RowKey == "" {
			t.Fatalf("save %d = %v, want the saved webhook", i, r)
		}
		saved = append(saved, w)
	}
	if w := saved[0]; w.Name != "rebuild" || w.URL != "https://hooks.example.com/rebuild" || !w.Enabled || !w.ContentPublishEvents || w.ContentSaveEvents {
		t.Errorf("saved webhook = %v", w)
	}
	for i, r := range res[2:4] {
		var doc struct {
			Status int `json:"status"`
			Errors []struct {
				Field string `json:"field"`
			} `json:"errors"`
		}
		json.Unmarshal(r.Body, &doc)
		if r.OK || r.Status != 400 || doc.Status != 400 || len(doc.Errors) != 1 || doc.Errors[0].Field != "instanceGuid" {
			t.Errorf("save %d naming no or another instance = %v, want a 400 naming instanceGuid", i+2, r)
		}
	}
	var list webhooks.WebhookPage
	if r := res[4]; !r.OK || json.Unmarshal(r.Result, &list) != nil {
		t.Fatalf("webhookList = %v", r)
	}
	if len(list.Items) != 2 {
		t.Errorf("webhookList holds %d webhooks, want the 2 accepted", len(list.Items))
	}

	// A webhook read with the SDK saves back (the SDK adds instanceGuid),
	// and deletes.
	id := saved[0].RowKey
	res = s.runManagementSDK(t, []mgmtCall{{"webhookMethods.getWebhook", []any{guid, id}}})
	var back map[string]any
	if r := res[0]; !r.OK || json.Unmarshal(r.Result, &back) != nil {
		t.Fatalf("getWebhook = %v", r)
	}
	back["instanceGuid"], back["contentSaveEvents"] = guid, true
	res = s.runManagementSDK(t, []mgmtCall{
		{"webhookMethods.saveWebhook", []any{guid, back}},
		{"webhookMethods.deleteWebhook", []any{guid, id}},
		{"webhookMethods.getWebhook", []any{guid, id}},
	})
	var up webhooks.Webhook
	if r := res[0]; !r.OK || json.Unmarshal(r.Result, &up) != nil || up.RowKey != id || !up.ContentSaveEvents {
		t.Errorf("saving a read webhook back = %v, want it updated", r)
	}
	if !res[1].OK {
		t.Errorf("deleteWebhook = %v", res[1])
	}
	if r := res[2]; r.OK || r.Status != 404 {
		t.Errorf("getWebhook after delete = %v, want a 404", r)
	}
}
