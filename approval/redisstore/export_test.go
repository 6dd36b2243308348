package redisstore

// SetOrdered lets a test take the Cluster path (ordered=false) on a
// standalone server: the mark and the script in separate round trips.
func SetOrdered(s *Store, ordered bool) { s.ordered = ordered }
