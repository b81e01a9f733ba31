package content

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/edgecms/edgecms/problem"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := f.instance("other")
	tests := []struct {
		name   string
		tname  string
		role   Role
		fields []string
	}{
		{"empty name", "", RoleEdit, []string{"name"}},
		{"blank name", "   ", RoleEdit, []string{"name"}},
		{"name too long", strings.Repeat("n", 201), RoleEdit, []string{"name"}},
		{"unknown role", "ci", Role("owner"), []string{"role"}},
		{"no role and no name", "", "", []string{"name", "role"}},
	}
	for _, tt := range tests {
		_, _, err := f.s.CreateToken(f.ctx, f.inst, tt.tname, tt.role)
		wantFields(t, tt.name, err, tt.fields...)
	}

	tok, secret, err := f.s.CreateToken(f.ctx, f.inst, "  deploy  ", RolePublish)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name != "deploy" || tok.Role != RolePublish || tok.InstanceID != f.inst.ID || !strings.HasPrefix(secret, "mt_") || len(secret) != 35 {
		t.Errorf("CreateToken = %+v, secret %q", tok, secret)
	}
	_, secret2, _ := f.s.CreateToken(f.ctx, f.inst, "deploy", RoleEdit)
	if secret2 == secret {
		t.Error("two tokens got the same secret")
	}
	otherTok, otherSecret, err := f.s.CreateToken(f.ctx, other, "theirs", RoleFull)
	if err != nil {
		t.Fatal(err)
	}

	auth := []struct {
		name   string
		guid   string
		secret string
		ok     bool
	}{
		{"own token", "acme", secret, true},
		{"guid in upper case", "ACME", secret, true},
		{"wrong secret", "acme", secret + "x", false},
		{"empty secret", "acme", "", false},
		{"another instance's token", "acme", otherSecret, false},
		{"own token on another instance", "other", secret, false},
		{"unknown instance", "nope", secret, false},
	}
	for _, tt := range auth {
		got, err := f.s.Authenticate(f.ctx, tt.guid, tt.secret)
		if tt.ok {
			if err != nil || got.ID != tok.ID || got.Role != RolePublish {
				t.Errorf("%s: Authenticate = %+v, %v; want token %d", tt.name, got, err, tok.ID)
			}
			continue
		}
		wantKind(t, tt.name, err, problem.Unauthorized)
	}
	if got, err := f.s.Authenticate(f.ctx, "other", otherSecret); err != nil || got.ID != otherTok.ID {
		t.Errorf("other instance's own token: %+v, %v", got, err)
	}

	ts, err := f.s.Tokens(f.ctx, f.inst)
	if err != nil || len(ts) != 2 || ts[0].ID != tok.ID {
		t.Errorf("Tokens = %+v, %v", ts, err)
	}
	wantKind(t, "delete another instance's token", f.s.DeleteToken(f.ctx, f.inst, otherTok.ID), problem.NotFound)
	if err := f.s.DeleteToken(f.ctx, f.inst, tok.ID); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.Authenticate(f.ctx, "acme", secret)
	wantKind(t, "a deleted token", err, problem.Unauthorized)
	wantKind(t, "delete twice", f.s.DeleteToken(f.ctx, f.inst, tok.ID), problem.NotFound)
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := f.instance("other")
	tests := []struct {
		name   string
		in     APIKeyInput
		fields []string
	}{
		{"no name", APIKeyInput{Type: "fetch"}, []string{"name"}},
		{"unknown type", APIKeyInput{Name: ptr("k"), Type: "admin"}, []string{"type"}},
		{"expiry now", APIKeyInput{Name: ptr("k"), Type: "fetch", ExpiresAt: at(0)}, []string{"expiresAt"}},
		{"expiry in the past", APIKeyInput{Name: ptr("k"), Type: "preview", ExpiresAt: at(-time.Hour)}, []string{"expiresAt"}},
		{"everything wrong", APIKeyInput{Name: ptr(" "), Type: "", ExpiresAt: at(-time.Hour)}, []string{"name", "type", "expiresAt"}},
	}
	for _, tt := range tests {
		_, _, err := f.s.CreateAPIKey(f.ctx, f.inst, tt.in)
		wantFields(t, tt.name, err, tt.fields...)
	}

	live, liveSecret, err := f.s.CreateAPIKey(f.ctx, f.inst, APIKeyInput{Name: ptr("site"), Type: "fetch"})
	if err != nil {
		t.Fatal(err)
	}
	prev, prevSecret, err := f.s.CreateAPIKey(f.ctx, f.inst, APIKeyInput{Name: ptr("preview"), Type: "preview", ExpiresAt: at(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(liveSecret, "live_") || !strings.HasPrefix(prevSecret, "preview_") {
		t.Errorf("secrets %q and %q, want live_ and preview_ prefixes", liveSecret, prevSecret)
	}
	if live.Type != "fetch" || !live.Enabled || live.ExpiresAt != nil || !bytes.Equal(live.Hash, HashSecret(liveSecret)) {
		t.Errorf("fetch key = %+v", live)
	}
	if prev.ExpiresAt == nil || !prev.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("preview key expires %v, want %v", prev.ExpiresAt, t0.Add(time.Hour))
	}
	_, otherSecret, err := f.s.CreateAPIKey(f.ctx, other, APIKeyInput{Name: ptr("theirs"), Type: "fetch"})
	if err != nil {
		t.Fatal(err)
	}

	lookups := []struct {
		name   string
		guid   string
		secret string
		want   int64
	}{
		{"fetch key", "acme", liveSecret, live.ID},
		{"preview key, guid in upper case", "ACME", prevSecret, prev.ID},
		{"unknown secret", "acme", "live_nope", 0},
		{"another instance's key", "acme", otherSecret, 0},
		{"own key on another instance", "other", liveSecret, 0},
	}
	for _, tt := range lookups {
		k, err := f.s.LookupAPIKey(f.ctx, tt.guid, tt.secret)
		if tt.want == 0 {
			wantKind(t, tt.name, err, problem.NotFound)
			continue
		}
		if err != nil || k.ID != tt.want {
			t.Errorf("%s: LookupAPIKey = %+v, %v; want key %d", tt.name, k, err, tt.want)
		}
	}

	// Expiry: usable until the expiry date, not at or after it.
	usable := []struct {
		now  time.Time
		want bool
	}{
		{t0, true},
		{t0.Add(time.Hour - time.Nanosecond), true},
		{t0.Add(time.Hour), false},
		{t0.Add(2 * time.Hour), false},
	}
	for _, u := range usable {
		if got := prev.Usable(u.now); got != u.want {
			t.Errorf("key expiring at %v: Usable(%v) = %v, want %v", prev.ExpiresAt, u.now, got, u.want)
		}
	}

	// Updates: disable, rename, change and clear the expiry.
	k, err := f.s.UpdateAPIKey(f.ctx, f.inst, live.ID, APIKeyInput{Enabled: ptr(false)})
	if err != nil || k.Enabled || k.Usable(t0) || k.Name != "site" {
		t.Errorf("disable: %+v, %v", k, err)
	}
	if got, err := f.s.LookupAPIKey(f.ctx, "acme", liveSecret); err != nil || got.Enabled {
		t.Errorf("a disabled key is still found (and says so): %+v, %v", got, err)
	}
	k, err = f.s.UpdateAPIKey(f.ctx, f.inst, live.ID, APIKeyInput{Name: ptr(" main site "), Enabled: ptr(true), ExpiresAt: at(3 * time.Hour)})
	if err != nil || !k.Enabled || k.Name != "main site" || k.ExpiresAt == nil || !k.ExpiresAt.Equal(t0.Add(3*time.Hour)) {
		t.Errorf("rename, enable and set expiry: %+v, %v", k, err)
	}
	k, err = f.s.UpdateAPIKey(f.ctx, f.inst, live.ID, APIKeyInput{ClearExpiry: true})
	if err != nil || k.ExpiresAt != nil || k.Name != "main site" || !k.Enabled {
		t.Errorf("clear expiry: %+v, %v", k, err)
	}
	if !bytes.Equal(k.Hash, HashSecret(liveSecret)) {
		t.Error("an update changed the key's secret")
	}
	_, err = f.s.UpdateAPIKey(f.ctx, f.inst, live.ID, APIKeyInput{Name: ptr("")})
	wantFields(t, "rename to nothing", err, "name")
	_, err = f.s.UpdateAPIKey(f.ctx, f.inst, 999999, APIKeyInput{Enabled: ptr(false)})
	wantKind(t, "update an unknown key", err, problem.NotFound)
	otherKeys, _ := f.s.APIKeys(f.ctx, other)
	_, err = f.s.UpdateAPIKey(f.ctx, f.inst, otherKeys[0].ID, APIKeyInput{Enabled: ptr(false)})
	wantKind(t, "update another instance's key", err, problem.NotFound)

	ks, err := f.s.APIKeys(f.ctx, f.inst)
	if err != nil || len(ks) != 2 || ks[0].ID != live.ID || ks[1].ID != prev.ID {
		t.Errorf("APIKeys = %+v, %v", ks, err)
	}
	wantKind(t, "delete another instance's key", f.s.DeleteAPIKey(f.ctx, f.inst, otherKeys[0].ID), problem.NotFound)
	if err := f.s.DeleteAPIKey(f.ctx, f.inst, live.ID); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.LookupAPIKey(f.ctx, "acme", liveSecret)
	wantKind(t, "a deleted key", err, problem.NotFound)
}

// TestSecretsNotStored: the credential tables hold only SHA-256 hashes.
func TestSecretsNotStored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var secrets []string
	for _, r := range Roles {
		_, s, err := f.s.CreateToken(f.ctx, f.inst, "t-"+string(r), r)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, s)
	}
	for _, typ := range []string{"fetch", "preview"} {
		_, s, err := f.s.CreateAPIKey(f.ctx, f.inst, APIKeyInput{Name: ptr(typ), Type: typ})
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, s)
	}
	var rows []string
	if err := f.db.SelectContext(f.ctx, &rows, `SELECT row_to_json(t)::text FROM tokens t UNION ALL SELECT row_to_json(k)::text FROM api_keys k`); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(secrets) {
		t.Fatalf("%d credential rows, want %d", len(rows), len(secrets))
	}
	for _, s := range secrets {
		body := s[strings.Index(s, "_")+1:]
		for _, r := range rows {
			if strings.Contains(r, body) || strings.Contains(strings.ToLower(r), strings.ToLower(body)) {
				t.Errorf("a credential row holds the secret %q: %s", s, r)
			}
		}
	}
	var hashes [][]byte
	if err := f.db.SelectContext(f.ctx, &hashes, `SELECT token_hash FROM tokens UNION ALL SELECT key_hash FROM api_keys`); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, s := range secrets {
		h := sha256.Sum256([]byte(s))
		want[string(h[:])] = true
	}
	for _, h := range hashes {
		if !want[string(h)] {
			t.Errorf("stored hash %x is not the SHA-256 of a secret", h)
		}
	}
	// The whole database: no text column of any table holds a secret.
	var dump string
	if err := f.db.GetContext(f.ctx, &dump, `SELECT coalesce(string_agg(x, ' '), '') FROM (
		SELECT row_to_json(i)::text AS x FROM instances i
		UNION ALL SELECT row_to_json(e)::text FROM events e) d`); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(dump, s) {
			t.Errorf("the secret %q is stored", s)
		}
	}
}
