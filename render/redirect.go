package render

import "time"

// lastAccessLayout is the form of lastAccessDate: UTC to the millisecond
// with a Z, which a JavaScript Date reads and writes back unchanged
// (toISOString).
const lastAccessLayout = "2006-01-02T15:04:05.000Z"

// redirections renders GET /urlredirection: {items: [{id, originUrl,
// destinationUrl, statusCode}], isUpToDate, lastAccessDate}. lastAccessDate
// is when the redirections last changed; a request whose lastAccessDate is
// at or after it is up to date and gets no items. Any other request gets
// them all.
func (j *job) redirections() error {
	list, err := j.r.reads.Redirections(j.ctx, j.inst)
	if err != nil {
		return err
	}
	upToDate := false
	if j.req.LastAccessDate != "" {
		t, err := time.Parse(time.RFC3339Nano, j.req.LastAccessDate)
		upToDate = err == nil && !t.Before(list.Changed)
	}
	w := &j.w
	w.open('{')
	w.key("items")
	w.open('[')
	if !upToDate {
		for _, r := range list.Items {
			w.open('{')
			w.key("id")
			w.int(r.ID)
			w.key("originUrl")
			w.str(r.OriginURL)
			w.key("destinationUrl")
			w.str(r.DestinationURL)
			w.key("statusCode")
			w.int(int64(r.StatusCode))
			w.close('}')
		}
	}
	w.close(']')
	w.key("isUpToDate")
	w.bool(upToDate)
	w.key("lastAccessDate")
	w.str(list.Changed.UTC().Format(lastAccessLayout))
	w.close('}')
	return nil
}
