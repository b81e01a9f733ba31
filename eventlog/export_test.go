package eventlog

// WriterLock is the shared lock of event writers, for tests that write
// events in a transaction of their own.
const WriterLock = writerLock

// TrimBatch is the size of a trim batch, for tests that make it small.
var TrimBatch = &trimBatch
