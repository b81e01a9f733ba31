package pg

// Advisory lock keys. Every advisory lock edgecms takes is registered here,
// so that two uses can never share a key by accident: a lock taken with one
// key ((key) or (key, int)) or two ((space, key)) only conflicts with locks
// of the same key, and two unrelated uses of one key would block, or worse
// exclude, each other. A key once given to a use is never given to another:
// binaries of two versions may run side by side during an upgrade. (A
// one-key lock never conflicts with a two-key lock: Postgres tags them
// apart.)
const (
	// LockMigrate serialises migrators (several origins starting at once):
	// a session lock held while schema.Migrate runs.
	LockMigrate = 7301966
	// LockSyncStamp is held by a sync stamper (or its Prune) for its
	// transaction, so one stamper at a time reads the event log.
	LockSyncStamp = 7301967
	// LockEventWriter is held shared by every transaction that may append
	// events. schema/005_event_horizon.sql and 006 name this number in
	// SQL: it cannot change.
	LockEventWriter = 7301968
	// LockEventTrim is held by a batch of eventlog's Trim, so that
	// trimmers take turns.
	LockEventTrim = 7301969
	// LockPublisher is the publisher's space of two-key locks:
	// (LockPublisher, 0) the event cursor, (LockPublisher, 1) the feed
	// object, (LockPublisher, 2) a batch of a trim.
	LockPublisher = 7301970
	// LockPublisherInstance is the space of (LockPublisherInstance,
	// hashtext(guid)): the writes of one instance's objects.
	LockPublisherInstance = 7301971
	// LockPublisherManifest is the space of (LockPublisherManifest,
	// hashtext(guid)): one instance's key manifest.
	LockPublisherManifest = 7301972
	// LockWebhookIntake is the space of (LockWebhookIntake,
	// hashtext(consumer)): one webhook dispatcher at a time reads the
	// event log for a consumer.
	LockWebhookIntake = 7301973
	// LockTestUse is the space of (LockTestUse, hashtext(template)): held
	// shared by every test binary that clones a template database
	// (internal/pgtest), and exclusively by the one that drops it.
	LockTestUse = 7301974
	// LockTestBuild is the space of (LockTestBuild, hashtext(template)):
	// one test binary at a time builds a template database.
	LockTestBuild = 7301975
	// LockTestReaper is the space of (LockTestReaper, pid): one process
	// waits for the end of the go test run pid to drop its templates.
	LockTestReaper = 7301976
	// LockAssetKey is the space of (LockAssetKey, hashtext(key)): the
	// creations and deletions of the assets of one storage key.
	LockAssetKey = 7302001
)
