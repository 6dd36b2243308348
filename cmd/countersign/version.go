package main

import "runtime/debug"

// buildVersion is set at link time: -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion string

// version is buildVersion, or what the Go toolchain recorded in the binary.
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
