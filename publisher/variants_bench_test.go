package publisher

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/edgecms/edgecms/content"
	"github.com/edgecms/edgecms/fetch"
)

var benchVariantPosts = flag.Int("bench-variant-posts", 300, "posts in the container of BenchmarkPublishVariants")

// BenchmarkPublishVariants measures what one publish costs with 0, 100 and
// 1,500 filter variants of its container written back by the origin (each
// showing the post edited): the post's new title, from the publish call
// until the publisher handed its events off. Before each publish the
// variants are written back again, off the clock (a publish drops them). It
// reports, per publish, the objects rendered and written (deletes
// included), the CPU of the test process (the publisher's, and the
// content calls') and of the Postgres backends of the test database, as
// the issue measured it.
//
//	go test ./publisher -run X -bench PublishVariants -benchtime 5x
func BenchmarkPublishVariants(b *testing.B) {
	s := newScaleSite(b, *benchVariantPosts)
	e := s.e
	post := s.posts[len(s.posts)/2]
	for _, n := range []int{0, 100, 1500} {
		b.Run(fmt.Sprintf("variants=%d", n), func(b *testing.B) {
			reqs := make([]fetch.Request, n)
			for i := range reqs {
				reqs[i] = mustParse("/"+e.guid+"/fetch/en-us/list/posts", fmt.Sprintf(`filter=fields.title[ne]"v%d"`, i))
			}
			var rendered, written int64
			var cpu, pgCPU time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				for c := 0; c < len(reqs); c += 100 {
					_, err := s.p.writeBack(e.ctx, e.guid, reqs[c:min(c+100, len(reqs))])
					e.must(err)
				}
				e.must(s.p.Drain(e.ctx))
				runtime.GC() // the setup's garbage is not the publish's
				before, cpu0, pg0 := s.p.Stats(), processCPU(b), backendCPU(b, e.db)
				b.StartTimer()
				_, err := e.cs.SaveItem(e.ctx, e.inst, "en-us", post, map[string]json.RawMessage{
					"Title": raw(fmt.Sprintf("Edited %d %d", n, i)), "Slug": raw(fmt.Sprintf("post-%d", post))})
				e.must(err)
				_, err = e.cs.ItemAction(e.ctx, e.inst, "en-us", post, content.ActionPublish)
				e.must(err)
				e.must(s.p.drainEvents(e.ctx))
				b.StopTimer()
				after := s.p.Stats()
				cpu += processCPU(b) - cpu0
				for pid, t := range backendCPU(b, e.db) {
					pgCPU += t - pg0[pid]
				}
				rendered += after.Rendered - before.Rendered
				written += after.Written - before.Written
				e.must(s.p.drainBacklog(e.ctx))
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(rendered)/float64(b.N), "rendered/op")
			b.ReportMetric(float64(written)/float64(b.N), "written/op")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(pgCPU.Microseconds())/1000/float64(b.N), "pg-cpu-ms/op")
		})
	}
}

// processCPU returns the CPU time (user and system) of this process.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU returns the CPU time of each Postgres backend connected to
// the database of db, read from /proc (the server runs on this machine).
func backendCPU(b *testing.B, db *sqlx.DB) map[int]time.Duration {
	var pids []int
	if err := db.Select(&pids, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`); err != nil {
		b.Fatal(err)
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue // ended meanwhile
		}
		// Fields after the command (in brackets, which may hold spaces):
		// utime and stime are the 14th and 15th of the line, in clock
		// ticks of 10 ms.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = time.Duration(ut+st) * 10 * time.Millisecond
	}
	return out
}
