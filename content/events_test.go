package content

import (
	"testing"
	"time"

	"github.com/edgecms/edgecms/eventlog"
)

// TestEventRows checks the rows each kind of change writes, with every member.
func TestEventRows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()
	f.pages()
	mark := f.lastEvent()
	st := f.createItem("fr-ca", "Articles", map[string]any{"title": "T"})
	rows := f.eventsAfter(mark)
	if len(rows) != 1 {
		t.Fatalf("create item wrote %d events, want 1", len(rows))
	}
	e := rows[0]
	if e.InstanceID != f.inst.ID || e.InstanceGuid != "acme" || e.Tx == 0 || e.PageID != nil {
		t.Errorf("event row = %+v, want instance %d acme, a tx, no pageID", e, f.inst.ID)
	}
	f.checkEvents("create item", mark, itemEv(eventlog.Saved, "fr-ca", "Articles", st.ContentID, st.VersionID, t0))

	// The change date is the store's clock, in UTC, to the microsecond.
	f.clock = time.Date(2031, 1, 2, 3, 4, 5, 678901234, time.FixedZone("y", -5*3600))
	at := time.Date(2031, 1, 2, 8, 4, 5, 678901000, time.UTC)
	mark = f.lastEvent()
	f.itemAction("fr-ca", st.ContentID, ActionPublish)
	f.checkEvents("publish item", mark, itemEv(eventlog.Published, "fr-ca", "Articles", st.ContentID, st.VersionID, at))
	if got := f.item("fr-ca", st.ContentID); !got.Published.Modified.Equal(t0) {
		t.Errorf("published modified = %v, want the save's time %v", got.Published.Modified, t0)
	}

	mark = f.lastEvent()
	p := f.createPage("en-us", "Home", 0)
	f.checkEvents("create page", mark, pageEv(eventlog.Saved, "en-us", p.PageID, p.VersionID, at))
	for _, a := range []Action{ActionRequestApproval, ActionApprove, ActionPublish, ActionUnpublish} {
		mark = f.lastEvent()
		f.pageAction("en-us", p.PageID, a)
		v := p.VersionID
		if a == ActionUnpublish {
			v = 0
		}
		f.checkEvents("page "+string(a), mark, pageEv(a.EventState(), "en-us", p.PageID, v, at))
	}
}

func listEv(locale, ref string) ev {
	return ev{State: eventlog.Deleted, Subject: eventlog.SubjectList, Locale: locale, ReferenceName: ref, ChangeDate: t0}
}

func localeEv(code string) ev {
	return ev{State: eventlog.Deleted, Subject: eventlog.SubjectLocale, Locale: code, ChangeDate: t0}
}

func channelEv(locale, channel string, at time.Time) ev {
	return ev{State: eventlog.Deleted, Subject: eventlog.SubjectChannel, Locale: locale, ReferenceName: channel, ChangeDate: at}
}

// TestStructureEvents checks the events of changes to an instance's
// structure, which the publisher needs to add or withdraw whole sets of
// objects: locales added and removed, channels added, containers deleted.
// A change that is refused writes nothing.
func TestStructureEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.articles()

	mark := f.lastEvent()
	f.locale("de-DE")
	f.checkEvents("create locale", mark, localeEv("de-DE"))
	mark = f.lastEvent()
	if _, err := f.s.CreateLocale(f.ctx, f.inst, Locale{Code: "DE-de", Name: "again"}); err == nil {
		t.Fatal("a second de-de was created")
	}
	f.checkEvents("create a duplicate locale", mark)

	mark = f.lastEvent()
	ch, err := f.s.CreateChannel(f.ctx, f.inst, "footer")
	if err != nil {
		t.Fatal(err)
	}
	// Dated when the channel was created.
	at := ch.CreatedAt.UTC()
	f.checkEvents("create channel", mark, channelEv("en-us", "footer", at), channelEv("fr-ca", "footer", at), channelEv("de-DE", "footer", at))
	mark = f.lastEvent()
	if _, err := f.s.CreateChannel(f.ctx, f.inst, "Footer"); err == nil {
		t.Fatal("a second footer channel was created")
	}
	f.checkEvents("create a duplicate channel", mark)

	f.container("Empty", "Article")
	mark = f.lastEvent()
	if err := f.s.DeleteContainer(f.ctx, f.inst, "empty"); err != nil {
		t.Fatal(err)
	}
	f.checkEvents("delete container", mark, listEv("en-us", "Empty"), listEv("fr-ca", "Empty"), listEv("de-DE", "Empty"))
	f.createItem("en-us", "Articles", map[string]any{"title": "T"})
	mark = f.lastEvent()
	if err := f.s.DeleteContainer(f.ctx, f.inst, "Articles"); err == nil {
		t.Fatal("a container with items was deleted")
	}
	f.checkEvents("delete a container with items", mark)

	mark = f.lastEvent()
	if err := f.s.DeleteLocale(f.ctx, f.inst, "de-de"); err != nil {
		t.Fatal(err)
	}
	f.checkEvents("delete locale", mark, localeEv("de-DE"))
	mark = f.lastEvent()
	if err := f.s.DeleteLocale(f.ctx, f.inst, "en-us"); err == nil {
		t.Fatal("the default locale was deleted")
	}
	f.checkEvents("delete the default locale", mark)
}
