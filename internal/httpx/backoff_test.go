package httpx

import (
	"net/http"
	"testing"
	"time"
)

func TestJitteredBackoff(t *testing.T) {
	tests := []struct{ min, max time.Duration }{
		{2 * time.Second, 2 * time.Minute},
		{100 * time.Millisecond, 100 * time.Millisecond},
		{time.Second, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		for n := range 40 { // n past the cap must not overflow
			lo := tt.min << min(n, 20)
			for range 50 {
				d := jitteredBackoff(tt.min, tt.max, n)
				if d < tt.min || d > tt.max {
					t.Fatalf("jitteredBackoff(%s, %s, %d) = %s, outside [min, max]", tt.min, tt.max, n, d)
				}
				if lo <= tt.max && d < lo {
					t.Fatalf("jitteredBackoff(%s, %s, %d) = %s, want >= %s", tt.min, tt.max, n, d, lo)
				}
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		header string
		ok     bool
		lo, hi time.Duration
	}{
		{"", false, 0, 0},
		{"0", true, 0, 0},
		{"120", true, 120 * time.Second, 120 * time.Second},
		{"-5", false, 0, 0},
		{"soon", false, 0, 0},
		{"99999999999999999", true, 365 * 24 * time.Hour, 365 * 24 * time.Hour},
		{future, true, 58 * time.Minute, time.Hour},
		{past, true, 0, 0},
	}
	for _, tt := range tests {
		resp := &http.Response{Header: http.Header{}}
		if tt.header != "" {
			resp.Header.Set("Retry-After", tt.header)
		}
		d, ok := retryAfter(resp)
		if ok != tt.ok || d < tt.lo || d > tt.hi {
			t.Errorf("retryAfter(%q) = %s, %v; want [%s, %s], %v", tt.header, d, ok, tt.lo, tt.hi, tt.ok)
		}
	}
}
