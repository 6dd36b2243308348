package redisstore

// SetOrdered lets a test take the Cluster path (ordered=false) on a
// standalone server: the mark and the script in separate round trips.
func SetOrdered(s *Store, ordered bool) { s.ordered = ordered }

// RecordKey is the key of record id.
func RecordKey(s *Store, id string) string { return s.keys(id)[0] }

// PendingIndex is the pending index of the shard of record id.
func PendingIndex(s *Store, id string) string { return s.keys(id)[1] }

// LegacyKey is where versions before the shards kept record id.
func LegacyKey(s *Store, id string) string { return s.legacyKey(id) }

// IDIndex and ChannelCounts are the id index and the channel counts of the
// shard of record id.
func IDIndex(s *Store, id string) string       { return s.keys(id)[2] }
func ChannelCounts(s *Store, id string) string { return s.keys(id)[3] }
