package approval

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// idEncoding is lower-case base32 without padding: URL-safe, no characters
// a terminal or a chat client would mangle, easy to type after `approve`.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns a new unguessable approval id: 128 bits from crypto/rand,
// as 26 lower-case base32 characters.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+): it crashes the program instead
	return idEncoding.EncodeToString(b[:])
}

// ValidID reports whether id has the shape NewID gives. Callers use it to
// reject a mistyped or forged id before it reaches the store.
func ValidID(id string) bool {
	if len(id) != 26 {
		return false
	}
	return strings.Trim(id, "abcdefghijklmnopqrstuvwxyz234567") == ""
}

// ArgsHash returns the hex sha256 of args in canonical form: object keys
// sorted, no insignificant white space, numbers kept exactly as written.
// Arguments that are not valid JSON are hashed as they are.
func ArgsHash(args json.RawMessage) string {
	sum := sha256.Sum256(canonical(args))
	return hex.EncodeToString(sum[:])
}

func canonical(args json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return args
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // maps encode with sorted keys
		return args
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
