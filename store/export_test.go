package store

// WithoutListMetadata makes an S3 store list as it does against AWS, which
// returns no metadata in listings.
func WithoutListMetadata(s Store) Store {
	s.(*s3store).listMeta = false
	return s
}
