package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		args    []string
		env     map[string]string
		wantErr string
		check   func(c config) bool
	}{
		{args: nil, check: func(c config) bool {
			return c.Addr == "127.0.0.1:8080" && c.FetchRateLimit == 10 && c.WebhookTimeout == 15*time.Second && c.EdgeFeedPoll == 50*time.Millisecond
		}},
		{env: map[string]string{"EDGECMS_WEBHOOK_TIMEOUT": "30s"}, check: func(c config) bool { return c.WebhookTimeout == 30*time.Second }},
		{env: map[string]string{"EDGECMS_ADDR": "0.0.0.0:1"}, args: []string{"--addr", "127.0.0.1:9"}, check: func(c config) bool { return c.Addr == "127.0.0.1:9" }},
		{args: []string{"--webhook-timeout", "0s"}, wantErr: "EDGECMS_WEBHOOK_TIMEOUT"},
		{args: []string{"--webhook-timeout", "soon"}, wantErr: "EDGECMS_WEBHOOK_TIMEOUT"},
		{args: []string{"--fetch-rate-limit", "-1"}, wantErr: "EDGECMS_FETCH_RATE_LIMIT"},
		{args: []string{"--edge-cache-bytes", "12"}, wantErr: "EDGECMS_EDGE_CACHE_BYTES"},
		{args: []string{"--edge-feed-poll", "2h"}, wantErr: "EDGECMS_EDGE_FEED_POLL"},
		{args: []string{"--database-url", "mysql://x"}, wantErr: "DATABASE_URL"},
		{args: []string{"--tls-cert", "a.pem"}, wantErr: "go together"},
	}
	for _, tt := range tests {
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c, err := loadConfig(fs, tt.args)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("loadConfig(%v, %v) error = %v, want one naming %s", tt.args, tt.env, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("loadConfig(%v, %v) = %v", tt.args, tt.env, err)
		case !tt.check(c):
			t.Errorf("loadConfig(%v, %v) = %+v, not what was asked", tt.args, tt.env, c)
		}
	}
}
