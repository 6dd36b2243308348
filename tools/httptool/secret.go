package httptool

// SecretName reports whether a header, query parameter or argument name
// marks a credential (Authorization, Cookie, X-Api-Key, api_token, …):
// the one list the HTTP card masks by, for other tools' cards to use.
func SecretName(name string) bool { return secretHeader(name) }

// MaskURL hides a URL's password and the values of secret-looking query
// parameters, as the HTTP card does; masked reports whether it did.
func MaskURL(raw string) (shown string, masked bool) { return maskURL(raw) }
