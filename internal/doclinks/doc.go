// Package doclinks holds the test that keeps the README and docs/ whole:
// every relative link names a file that exists, and every #anchor a
// heading in it. It has no code of its own.
package doclinks
